/**
 * Every operation of the service's OpenAPI document that the SDK calls, by
 * method name. `test/coverage.test.ts` fails when the document has an
 * operation that is neither here nor in EXCLUDED_OPERATIONS, or when an entry
 * here no longer exists in the document.
 *
 * `auth` says which credential the SDK sends: `key` an API key (server
 * callers), `console` none of its own: a person's console sign-in cookie,
 * which the browser sends (the service refuses API keys there), `session` the participant's `session_id` and `engagement_id`
 * (never a key: the service refuses keys on participant routes), `public`
 * nothing. `idempotency` names where the SDK puts a generated idempotency key
 * when the caller gives none: `body` (the body's `idempotency_key`) or
 * `events` (each event of a batch). `attempt` marks activity calls whose
 * body `attempt_id`, when the caller gives one, makes a repeat return the
 * first result; the SDK does not invent one there (without it the service
 * continues the participant's waiting attempt), but retries such a call
 * after a network failure only when it is present.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type OperationAuth = 'key' | 'console' | 'session' | 'public';
export type IdempotencyPlacement = 'body' | 'events' | 'attempt';

export interface OperationSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: OperationAuth;
  readonly idempotency?: IdempotencyPlacement;
  /** A server-sent-event stream: called through `streamEvents`, not as a JSON request. */
  readonly stream?: true;
  readonly deprecated?: string;
}

export const OPERATIONS = {
  // Sessions and the tenant.
  createSession: { method: 'POST', path: '/api/v1/sessions', auth: 'key' },
  getTenant: { method: 'GET', path: '/api/v1/tenant', auth: 'key' },
  getTenantUsage: { method: 'GET', path: '/api/v1/tenant/usage', auth: 'key' },
  getTenantLimits: { method: 'GET', path: '/api/v1/tenant/limits', auth: 'key' },
  updateTenant: { method: 'PATCH', path: '/api/v1/tenant', auth: 'key' },

  // API keys. The service takes an owner's console cookie (or an admin login token) here, never an API key:
  // they are for the console, whose client is created with `credentials` and `csrfToken`.
  listApiKeys: { method: 'GET', path: '/api/v1/events/api-keys', auth: 'console' },
  createApiKey: { method: 'POST', path: '/api/v1/events/api-keys', auth: 'console' },
  updateApiKey: { method: 'PATCH', path: '/api/v1/events/api-keys/{id}', auth: 'console' },
  revokeApiKey: { method: 'DELETE', path: '/api/v1/events/api-keys/{id}', auth: 'console' },
  rotateApiKey: { method: 'POST', path: '/api/v1/events/api-keys/{id}/rotate', auth: 'console' },

  // Activities (participant).
  validateActivity: { method: 'POST', path: '/api/v1/activities/{activityId}/validate', auth: 'session', idempotency: 'attempt' },
  completeActivity: { method: 'POST', path: '/api/v1/activities/{activityId}/complete-with-actions', auth: 'session', idempotency: 'attempt' },
  getActivityEligibility: { method: 'GET', path: '/api/v1/activities/{activityId}/eligibility', auth: 'session' },
  emitFact: { method: 'POST', path: '/api/v1/activities/facts/emit', auth: 'session', idempotency: 'body' },
  reportActivityCompletion: { method: 'POST', path: '/api/v1/activities/{activityId}/completions', auth: 'key' },

  // Analytics (the console's Overview).
  getAnalyticsOverview: { method: 'GET', path: '/api/v1/admin/analytics/overview', auth: 'key' },

  // Console access. Sign-in and invitations send no credential; the others take an admin key, or in the console the
  // browser's same-origin sign-in cookie with the X-CSRF-Token header on changes.
  // In the console, create the client with `credentials` and `csrfToken`: key operations then go without a key.
  createConsoleSession: { method: 'POST', path: '/api/v1/console/session', auth: 'public' },
  getConsoleSession: { method: 'GET', path: '/api/v1/console/session', auth: 'key' },
  deleteConsoleSession: { method: 'DELETE', path: '/api/v1/console/session', auth: 'key' },
  changeConsolePassword: { method: 'POST', path: '/api/v1/console/password', auth: 'key' },
  acceptConsoleInvitation: { method: 'POST', path: '/api/v1/console/invitations/accept', auth: 'public' },
  listConsoleUsers: { method: 'GET', path: '/api/v1/admin/users', auth: 'key' },
  inviteConsoleUser: { method: 'POST', path: '/api/v1/admin/users', auth: 'key' },
  getConsoleUser: { method: 'GET', path: '/api/v1/admin/users/{id}', auth: 'key' },
  updateConsoleUser: { method: 'PATCH', path: '/api/v1/admin/users/{id}', auth: 'key' },
  deleteConsoleUser: { method: 'DELETE', path: '/api/v1/admin/users/{id}', auth: 'key' },
  listAuditLog: { method: 'GET', path: '/api/v1/admin/audit-log', auth: 'key' },
  revealParticipantField: { method: 'POST', path: '/api/v1/admin/participants/{participant_id}/reveal', auth: 'key' },
  listPiiAccessLog: { method: 'GET', path: '/api/v1/admin/pii-access-log', auth: 'key' },

  // Badges.
  createBadge: { method: 'POST', path: '/api/v1/admin/badges', auth: 'key' },
  listBadges: { method: 'GET', path: '/api/v1/admin/badges', auth: 'key' },
  getBadge: { method: 'GET', path: '/api/v1/admin/badges/{code}', auth: 'key' },
  updateBadge: { method: 'PATCH', path: '/api/v1/admin/badges/{code}', auth: 'key' },
  deleteBadge: { method: 'DELETE', path: '/api/v1/admin/badges/{code}', auth: 'key' },
  awardBadge: { method: 'POST', path: '/api/v1/admin/badges/{code}/award', auth: 'key' },
  getBadgeStatus: { method: 'GET', path: '/api/v1/public/badges/status', auth: 'session' },

  // Challenges.
  createChallenge: { method: 'POST', path: '/api/v1/admin/challenges', auth: 'key' },
  listChallenges: { method: 'GET', path: '/api/v1/admin/challenges', auth: 'key' },
  getChallenge: { method: 'GET', path: '/api/v1/admin/challenges/{id}', auth: 'key' },
  updateChallenge: { method: 'PATCH', path: '/api/v1/admin/challenges/{id}', auth: 'key' },
  deleteChallenge: { method: 'DELETE', path: '/api/v1/admin/challenges/{id}', auth: 'key' },
  publishChallenge: { method: 'POST', path: '/api/v1/admin/challenges/{id}/publish', auth: 'key' },
  endChallenge: { method: 'POST', path: '/api/v1/admin/challenges/{id}/end', auth: 'key' },
  archiveChallenge: { method: 'POST', path: '/api/v1/admin/challenges/{id}/archive', auth: 'key' },
  listPublicChallenges: { method: 'GET', path: '/api/v1/public/challenges', auth: 'session' },
  enrollInChallenge: { method: 'POST', path: '/api/v1/public/challenges/{id}/enroll', auth: 'session' },
  getChallengeProgress: { method: 'GET', path: '/api/v1/public/challenges/{id}/progress', auth: 'session' },
  getChallengeLeaderboard: { method: 'GET', path: '/api/v1/public/challenges/{id}/leaderboard', auth: 'public' },

  // Contests (participant).
  listActiveContests: { method: 'GET', path: '/api/v1/contests/active', auth: 'session' },
  getContest: { method: 'GET', path: '/api/v1/contests/{id}', auth: 'session' },
  enterContest: { method: 'POST', path: '/api/v1/contests/{id}/enter', auth: 'session' },
  getMyContestEntry: { method: 'GET', path: '/api/v1/contests/{id}/me', auth: 'session' },
  getContestPublicLeaderboard: { method: 'GET', path: '/api/v1/contests/{id}/leaderboard/public', auth: 'session' },
  getContestBracket: { method: 'GET', path: '/api/v1/contests/{id}/leaderboard/bracket', auth: 'session' },
  getContestPrizes: { method: 'GET', path: '/api/v1/contests/{id}/prizes', auth: 'session' },
  getContestWinners: { method: 'GET', path: '/api/v1/contests/{id}/winners', auth: 'session' },
  // Contests (server).
  getContestLeaderboard: { method: 'GET', path: '/api/v1/contests/{id}/leaderboard', auth: 'key' },
  createContest: { method: 'POST', path: '/api/v1/admin/contests', auth: 'key' },
  listContests: { method: 'GET', path: '/api/v1/admin/contests', auth: 'key' },
  getAdminContest: { method: 'GET', path: '/api/v1/admin/contests/{id}', auth: 'key' },
  updateContest: { method: 'PATCH', path: '/api/v1/admin/contests/{id}', auth: 'key' },
  publishContest: { method: 'POST', path: '/api/v1/admin/contests/{id}/publish', auth: 'key' },
  createContestEntry: { method: 'POST', path: '/api/v1/admin/contests/{id}/entries', auth: 'key' },
  getContestEntry: { method: 'GET', path: '/api/v1/admin/contests/{id}/entries/{participant_id}', auth: 'key' },
  listFraudReviews: { method: 'GET', path: '/api/v1/admin/fraud/reviews', auth: 'key' },
  decideFraudReview: { method: 'POST', path: '/api/v1/admin/fraud/decisions', auth: 'key' },

  // Engagements.
  createEngagement: { method: 'POST', path: '/api/v1/admin/engagements', auth: 'key' },
  listEngagements: { method: 'GET', path: '/api/v1/admin/engagements', auth: 'key' },
  getEngagement: { method: 'GET', path: '/api/v1/admin/engagements/{id}', auth: 'key' },
  updateEngagement: { method: 'PATCH', path: '/api/v1/admin/engagements/{id}', auth: 'key' },
  publishEngagement: { method: 'POST', path: '/api/v1/admin/engagements/{id}/publish', auth: 'key' },
  unpublishEngagement: { method: 'POST', path: '/api/v1/admin/engagements/{id}/unpublish', auth: 'key' },
  getSite: { method: 'GET', path: '/api/v1/sites/{tenantSlug}/{siteSlug}', auth: 'public' },
  createSiteSession: { method: 'POST', path: '/api/v1/sites/{tenantSlug}/{siteSlug}/sessions', auth: 'public' },
  getEmbedUrl: { method: 'GET', path: '/api/v1/public/engagements/{id}/embed-url', auth: 'key' },
  evaluateEligibility: { method: 'GET', path: '/api/v1/public/eligibility', auth: 'key' },
  recordImpression: { method: 'POST', path: '/api/v1/public/impressions', auth: 'key' },

  // Gates (participant).
  checkGates: { method: 'POST', path: '/api/v1/runtime/gates/check', auth: 'session' },
  recordScreenVisit: { method: 'POST', path: '/api/v1/runtime/screens/visits', auth: 'session' },

  // Event ingestion.
  ingestEvent: { method: 'POST', path: '/api/v1/ingest/events', auth: 'key', idempotency: 'body' },
  ingestEventBatch: { method: 'POST', path: '/api/v1/ingest/events/batch', auth: 'key', idempotency: 'events' },
  postEventBatch: { method: 'POST', path: '/api/v1/events/batch', auth: 'key', idempotency: 'events' },
  ingestEventSync: { method: 'POST', path: '/api/v1/ingest/events/sync', auth: 'key', idempotency: 'body' },
  searchEvents: { method: 'GET', path: '/api/v1/events/search', auth: 'key' },
  getStoredEvent: { method: 'GET', path: '/api/v1/admin/events/{event_id}', auth: 'key' },
  retryStoredEvent: { method: 'POST', path: '/api/v1/admin/events/{event_id}/retry', auth: 'key' },

  // Progression leaderboards.
  createLeaderboard: { method: 'POST', path: '/api/v1/admin/leaderboards', auth: 'key' },
  listLeaderboards: { method: 'GET', path: '/api/v1/admin/leaderboards', auth: 'key' },
  getLeaderboardDefinition: { method: 'GET', path: '/api/v1/admin/leaderboards/{code}', auth: 'key' },
  updateLeaderboard: { method: 'PATCH', path: '/api/v1/admin/leaderboards/{code}', auth: 'key' },
  deleteLeaderboard: { method: 'DELETE', path: '/api/v1/admin/leaderboards/{code}', auth: 'key' },
  refreshLeaderboard: { method: 'POST', path: '/api/v1/admin/leaderboards/{code}/refresh', auth: 'key' },
  getLeaderboardStandings: { method: 'GET', path: '/api/v1/admin/leaderboards/{code}/standings', auth: 'key' },
  getLeaderboard: { method: 'GET', path: '/api/v1/public/leaderboards/{code}', auth: 'public' },

  // Participants and privacy.
  upsertParticipantProfile: { method: 'PATCH', path: '/api/v1/gamify/admin/participants/{participant_id}/profile', auth: 'key' },
  getParticipantProfile: { method: 'GET', path: '/api/v1/gamify/admin/participants/{participant_id}', auth: 'key' },
  deleteParticipant: { method: 'DELETE', path: '/api/v1/gamify/admin/participants/{participant_id}', auth: 'key' },
  listParticipants: { method: 'GET', path: '/api/v1/gamify/admin/participants', auth: 'key' },
  searchParticipants: { method: 'GET', path: '/api/v1/admin/participants/search', auth: 'key' },
  createParticipantField: { method: 'POST', path: '/api/v1/gamify/admin/participant-fields', auth: 'key' },
  listParticipantFields: { method: 'GET', path: '/api/v1/gamify/admin/participant-fields', auth: 'key' },
  getParticipantField: { method: 'GET', path: '/api/v1/gamify/admin/participant-fields/{key}', auth: 'key' },
  updateParticipantField: { method: 'PATCH', path: '/api/v1/gamify/admin/participant-fields/{key}', auth: 'key' },
  deleteParticipantField: { method: 'DELETE', path: '/api/v1/gamify/admin/participant-fields/{key}', auth: 'key' },
  getParticipantState: { method: 'GET', path: '/api/v1/gamify/state/{participant_id}', auth: 'key' },
  getParticipant: {
    method: 'GET',
    path: '/api/v1/gamify/participants/{participant_id}',
    auth: 'key',
    deprecated: 'GET /gamify/participants/{id} is deprecated; use getParticipantState (GET /gamify/state/{id}?include=…)',
  },

  // Points.
  grantPoints: { method: 'POST', path: '/api/v1/gamify/points/grant', auth: 'key', idempotency: 'body' },
  deductPoints: { method: 'POST', path: '/api/v1/gamify/points/deduct', auth: 'key', idempotency: 'body' },
  getPointsSettings: { method: 'GET', path: '/api/v1/admin/points/settings', auth: 'key' },
  getTestClock: { method: 'GET', path: '/api/v1/admin/test-clock', auth: 'key' },
  advanceTestClock: { method: 'POST', path: '/api/v1/admin/test-clock/advance', auth: 'key' },
  resetTestClock: { method: 'DELETE', path: '/api/v1/admin/test-clock', auth: 'key' },
  updatePointsSettings: { method: 'PATCH', path: '/api/v1/admin/points/settings', auth: 'key' },
  createMultiplier: { method: 'POST', path: '/api/v1/admin/points/multipliers', auth: 'key' },
  listMultipliers: { method: 'GET', path: '/api/v1/admin/points/multipliers', auth: 'key' },
  getMultiplier: { method: 'GET', path: '/api/v1/admin/points/multipliers/{id}', auth: 'key' },
  deleteMultiplier: { method: 'DELETE', path: '/api/v1/admin/points/multipliers/{id}', auth: 'key' },
  listTiers: { method: 'GET', path: '/api/v1/admin/points/tiers', auth: 'key' },
  createTier: { method: 'POST', path: '/api/v1/admin/points/tiers', auth: 'key' },
  getTier: { method: 'GET', path: '/api/v1/admin/points/tiers/{code}', auth: 'key' },
  updateTier: { method: 'PATCH', path: '/api/v1/admin/points/tiers/{code}', auth: 'key' },
  deleteTier: { method: 'DELETE', path: '/api/v1/admin/points/tiers/{code}', auth: 'key' },
  getPointsHistory: { method: 'GET', path: '/api/v1/points/history', auth: 'key' },
  getPointsBalance: { method: 'POST', path: '/api/v1/points/balance', auth: 'session' },
  getPointsTransactions: { method: 'POST', path: '/api/v1/points/transactions', auth: 'session' },
  bulkGrantPoints: { method: 'POST', path: '/api/v1/admin/points/bulk-grant', auth: 'key', idempotency: 'body' },
  getBulkGrantJob: { method: 'GET', path: '/api/v1/admin/points/bulk-grant/{job_id}', auth: 'key' },

  // Files: imports and exports (the upload itself and the file download are excluded below).
  listImports: { method: 'GET', path: '/api/v1/admin/imports', auth: 'key' },
  getImport: { method: 'GET', path: '/api/v1/admin/imports/{import_id}', auth: 'key' },
  listImportErrors: { method: 'GET', path: '/api/v1/admin/imports/{import_id}/errors', auth: 'key' },
  createExport: { method: 'POST', path: '/api/v1/admin/exports', auth: 'key' },
  listExports: { method: 'GET', path: '/api/v1/admin/exports', auth: 'key' },
  getExport: { method: 'GET', path: '/api/v1/admin/exports/{export_id}', auth: 'key' },

  // Publishing: review requests for drafts (people without the publishing permission submit; publishers approve or return).
  createReview: { method: 'POST', path: '/api/v1/admin/reviews', auth: 'key' },
  listReviews: { method: 'GET', path: '/api/v1/admin/reviews', auth: 'key' },
  getReview: { method: 'GET', path: '/api/v1/admin/reviews/{id}', auth: 'key' },
  approveReview: { method: 'POST', path: '/api/v1/admin/reviews/{id}/approve', auth: 'key' },
  returnReview: { method: 'POST', path: '/api/v1/admin/reviews/{id}/return', auth: 'key' },

  // Referrals.
  generateReferralCode: { method: 'POST', path: '/api/v1/referrals/generate', auth: 'key' },
  validateReferralCode: { method: 'GET', path: '/api/v1/referrals/validate/{code}', auth: 'public' },
  convertReferral: { method: 'POST', path: '/api/v1/referrals/convert', auth: 'public' },
  getReferralStats: { method: 'GET', path: '/api/v1/referrals/stats/{participant_id}', auth: 'key' },
  getReferralSettings: { method: 'GET', path: '/api/v1/admin/referrals/settings', auth: 'key' },
  updateReferralSettings: { method: 'PUT', path: '/api/v1/admin/referrals/settings', auth: 'key' },
  listReferralConversions: { method: 'GET', path: '/api/v1/admin/referrals/conversions', auth: 'key' },
  approveReferralConversion: { method: 'POST', path: '/api/v1/admin/referrals/conversions/{id}/approve', auth: 'key' },
  rejectReferralConversion: { method: 'POST', path: '/api/v1/admin/referrals/conversions/{id}/reject', auth: 'key' },

  // Rewards.
  createReward: { method: 'POST', path: '/api/v1/admin/rewards', auth: 'key' },
  listRewards: { method: 'GET', path: '/api/v1/admin/rewards', auth: 'key' },
  getReward: { method: 'GET', path: '/api/v1/admin/rewards/{id}', auth: 'key' },
  updateReward: { method: 'PATCH', path: '/api/v1/admin/rewards/{id}', auth: 'key' },
  uploadRewardCodes: { method: 'POST', path: '/api/v1/admin/rewards/{id}/codes', auth: 'key' },
  listClaimedRewards: { method: 'GET', path: '/api/v1/public/rewards/claimed', auth: 'session' },

  // Earn rules.
  createRule: { method: 'POST', path: '/api/v1/admin/rules', auth: 'key' },
  listRules: { method: 'GET', path: '/api/v1/admin/rules', auth: 'key' },
  getRule: { method: 'GET', path: '/api/v1/admin/rules/{rule_id}', auth: 'key' },
  updateRule: { method: 'PATCH', path: '/api/v1/admin/rules/{rule_id}', auth: 'key' },
  deleteRule: { method: 'DELETE', path: '/api/v1/admin/rules/{rule_id}', auth: 'key' },
  simulateRule: { method: 'POST', path: '/api/v1/admin/rules/simulate', auth: 'key' },

  // Streaks.
  createStreak: { method: 'POST', path: '/api/v1/admin/streaks', auth: 'key' },
  listStreaks: { method: 'GET', path: '/api/v1/admin/streaks', auth: 'key' },
  getStreak: { method: 'GET', path: '/api/v1/admin/streaks/{code}', auth: 'key' },
  updateStreak: { method: 'PATCH', path: '/api/v1/admin/streaks/{code}', auth: 'key' },
  deleteStreak: { method: 'DELETE', path: '/api/v1/admin/streaks/{code}', auth: 'key' },

  // Webhooks and the event catalog.
  listWebhooks: { method: 'GET', path: '/api/v1/gamify/webhooks', auth: 'key' },
  createWebhook: { method: 'POST', path: '/api/v1/gamify/webhooks', auth: 'key' },
  getWebhook: { method: 'GET', path: '/api/v1/gamify/webhooks/{destination_id}', auth: 'key' },
  updateWebhook: { method: 'PATCH', path: '/api/v1/gamify/webhooks/{destination_id}', auth: 'key' },
  deleteWebhook: { method: 'DELETE', path: '/api/v1/gamify/webhooks/{destination_id}', auth: 'key' },
  testWebhook: { method: 'POST', path: '/api/v1/gamify/webhooks/{destination_id}/test', auth: 'key' },
  sendWebhookTestEvent: { method: 'POST', path: '/api/v1/gamify/webhooks/{destination_id}/test-events', auth: 'key' },
  listWebhookLogs: { method: 'GET', path: '/api/v1/gamify/webhooks/{destination_id}/logs', auth: 'key' },
  replayWebhookDelivery: { method: 'POST', path: '/api/v1/gamify/webhooks/{destination_id}/deliveries/{log_id}/replay', auth: 'key' },
  replayWebhookDeliveries: { method: 'POST', path: '/api/v1/gamify/webhooks/{destination_id}/replay', auth: 'key' },
  getWebhookReplayJob: { method: 'GET', path: '/api/v1/gamify/webhooks/{destination_id}/replay-jobs/{job_id}', auth: 'key' },
  getWebhookSettings: { method: 'GET', path: '/api/v1/gamify/webhooks/settings', auth: 'key' },
  updateWebhookSettings: { method: 'PATCH', path: '/api/v1/gamify/webhooks/settings', auth: 'key' },
  getEventCatalog: { method: 'GET', path: '/.well-known/events.json', auth: 'public' },

  streamEvents: { method: 'GET', path: '/api/v1/public/events/stream', auth: 'session', stream: true },
  streamTenantEvents: { method: 'GET', path: '/api/v1/gamify/webhooks/stream', auth: 'key', stream: true },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;

/**
 * Operations the SDK leaves out on purpose, with the reason. They need an
 * admin login token (a person's password exchanged for a JWT), which belongs
 * in the tenant's dashboard, not in a server integration or a browser.
 */
/** `file`: the body sent or answered is a file streamed as it is (CSV, JSON lines), which the JSON client does not speak. */
export const EXCLUDED_OPERATIONS: ReadonlyArray<{ method: HttpMethod; path: string; reason: string; file?: true }> = [
  { method: 'POST', path: '/api/v1/auth/login', reason: 'admin login with a person\'s password: dashboard only' },
  // The platform operator's routes take OPERATOR_TOKEN, a deployment secret no tenant holds (src/modules/access/operator-auth.ts).
  { method: 'GET', path: '/api/v1/operator/tenants/{tenant_id}/limits', reason: 'the platform operator\'s route (OPERATOR_TOKEN), not a tenant\'s' },
  { method: 'PATCH', path: '/api/v1/operator/tenants/{tenant_id}/limits', reason: 'the platform operator\'s route (OPERATOR_TOKEN), not a tenant\'s' },
  // The runtime's HTML page and browser assets (src/modules/runtime): a browser loads them in an iframe, the SDK has nothing to call there.
  { method: 'GET', path: '/embed/{tenantSlug}/{siteSlug}', reason: 'the runtime page (HTML) for an iframe, not an API' },
  { method: 'GET', path: '/embed-demo/{tenantSlug}/{siteSlug}', reason: 'a demo host page (HTML, development only), not an API' },
  { method: 'GET', path: '/embed/assets/runtime.js', reason: 'the runtime page\'s script, not an API' },
  { method: 'GET', path: '/embed/assets/runtime.css', reason: 'the runtime page\'s stylesheet, not an API' },
  // Files (src/modules/files): the body of an upload and of a download is the file itself, streamed; the client speaks JSON.
  { method: 'POST', path: '/api/v1/admin/imports', reason: 'the body is the file (text/csv or application/x-ndjson), streamed: send it with fetch or curl --data-binary', file: true },
  { method: 'GET', path: '/api/v1/admin/exports/{export_id}/file', reason: 'the answer is the file (CSV or JSON lines), streamed: fetch file_url', file: true },
];
