import { LoyaltyClient, type ClientOptions, type ParticipantSession } from './client.js';
import { requireNonEmptyString } from './validate.js';
import { LoyaltyValidationError } from './errors.js';
import { randomUuid } from './random.js';
import type {
  ActivityEligibility,
  BadgeStatus,
  ClaimedRewards,
  CompleteResponse,
  GateCheckBody,
  GateCheckResponse,
  PointsBalance,
  PublicEngagement,
  QuizAnswers,
  ScreenVisitBody,
  ScreenVisitResponse,
  StreamEvent,
  ValidateResponse,
} from './types.js';

/**
 * The headless API: everything a page needs to run a published engagement
 * with its own UI, through the public and participant routes only (no API
 * key). The runtime page (packages/runtime) is built on exactly this.
 */
export const CLAIMED_REWARDS_PAGE_SIZE = 50;

export interface EngagementSessionOptions {
  baseUrl: string;
  tenantSlug: string;
  siteSlug: string;
  /** A session the host page issued (POST /api/v1/sessions on its server); otherwise an anonymous one is started. */
  sessionId?: string;
  /** With sessionId: the participant it was issued for; ensureSession asks the service (GET /api/v1/public/participant) when left out. */
  participantId?: string;
  /** With sessionId: its expiry; ensureSession asks the service when left out. */
  expiresAt?: string;
  /** Display name of an anonymous session. */
  displayName?: string;
  /**
   * A draft's preview (the console's editor): with the preview session as `sessionId`, `load()` reads the
   * draft of this engagement (GET /api/v1/sites/{t}/{s}/preview) instead of the published one.
   */
  previewEngagementId?: string;
  fetch?: typeof fetch;
  /** Retry settings passed to the underlying client. */
  maxRetries?: ClientOptions['maxRetries'];
  timeoutMs?: ClientOptions['timeoutMs'];
}

export interface SessionInfo {
  session_id: string;
  participant_id: string;
  expires_at: string;
  /** The participant's language (BCP 47) when the tenant set one; null for a new anonymous participant. */
  locale: string | null;
}

export interface SpinResult {
  draw: ValidateResponse;
  completion: CompleteResponse;
}

export interface EngagementSession {
  /** GET /api/v1/sites/{tenantSlug}/{siteSlug}: the published engagement. */
  load(): Promise<PublicEngagement>;
  /** The participant session: the given one, or an anonymous one started once (POST /api/v1/sites/{t}/{s}/sessions). */
  ensureSession(): Promise<SessionInfo>;
  eligibility(activityId: string): Promise<ActivityEligibility>;
  /** Validate (the server draws the segment), then complete with actions on that same attempt. */
  spin(activityId: string): Promise<SpinResult>;
  submitQuiz(activityId: string, answers: QuizAnswers): Promise<CompleteResponse>;
  checkGates(body: GateCheckBody): Promise<GateCheckResponse>;
  recordScreenVisit(body: ScreenVisitBody): Promise<ScreenVisitResponse>;
  balance(): Promise<PointsBalance>;
  badges(): Promise<BadgeStatus>;
  rewards(): Promise<ClaimedRewards>;
  /**
   * Follows the participant's live events (GET /api/v1/public/events/stream). `onReset` is called when
   * the stream restarted from now after a resume it could not continue, and `onOpen` each time it is
   * (re)connected: what happened before is not delivered (re-read the state). Returns the unsubscribe
   * function.
   */
  subscribe(onEvent: (event: StreamEvent) => void, onError?: (error: unknown) => void, onReset?: () => void, onOpen?: () => void): () => void;
  /** The engagement once loaded, else null. */
  readonly engagement: PublicEngagement | null;
  /** The underlying typed client (for routes the headless API does not wrap). */
  readonly client: LoyaltyClient;
}

function attemptId(): string {
  return `sdk-${randomUuid()}`;
}

export function createEngagementSession(opts: EngagementSessionOptions): EngagementSession {
  requireNonEmptyString(opts?.tenantSlug, 'tenantSlug');
  requireNonEmptyString(opts.siteSlug, 'siteSlug');
  if (opts.sessionId !== undefined) requireNonEmptyString(opts.sessionId, 'sessionId');
  const client = new LoyaltyClient({ baseUrl: opts.baseUrl, fetch: opts.fetch, maxRetries: opts.maxRetries, timeoutMs: opts.timeoutMs });
  const site = { tenantSlug: opts.tenantSlug, siteSlug: opts.siteSlug };
  let engagement: PublicEngagement | null = null;
  let loading: Promise<PublicEngagement> | null = null;
  let starting: Promise<SessionInfo> | null = null;

  function read(): Promise<PublicEngagement> {
    if (!opts.previewEngagementId || !opts.sessionId) return client.engagements.getSite({ path: site });
    const session = { sessionId: opts.sessionId, engagementId: opts.previewEngagementId };
    // The draft has no publication time; the rest has the published engagement's shape.
    return client.engagements.getSitePreview({ path: site, session }).then((draft) => ({ ...draft, published_at: draft.updated_at }));
  }

  function load(): Promise<PublicEngagement> {
    const request = read().then((loaded) => {
      engagement = loaded;
      return loaded;
    });
    loading = request;
    // A failed load may be tried again by the next call.
    request.catch(() => {
      if (loading === request) loading = null;
    });
    return request;
  }

  function loaded(): Promise<PublicEngagement> {
    return engagement ? Promise.resolve(engagement) : (loading ?? load());
  }

  function ensureSession(): Promise<SessionInfo> {
    if (starting) return starting;
    const request = (async (): Promise<SessionInfo> => {
      if (opts.sessionId) {
        const current = await loaded();
        // Also proves the session works before the page relies on it (401 when it has expired or was revoked).
        const participant = await client.participants.getSession({ session: { sessionId: opts.sessionId, engagementId: current.engagement_id } });
        return {
          session_id: opts.sessionId,
          participant_id: opts.participantId ?? participant.participant_id,
          expires_at: opts.expiresAt ?? participant.session_expires_at,
          locale: participant.locale,
        };
      }
      // The service refuses (403 ANONYMOUS_SESSIONS_DISABLED) where the engagement does not allow anonymous sessions.
      const created = await client.engagements.createSiteSession({ path: site, body: opts.displayName ? { display_name: opts.displayName } : {} });
      // A participant made just now has no language yet.
      return { session_id: created.session_id, participant_id: created.participant_id, expires_at: created.expires_at, locale: null };
    })();
    starting = request;
    request.catch(() => {
      if (starting === request) starting = null;
    });
    return request;
  }

  async function session(): Promise<ParticipantSession> {
    const [info, current] = await Promise.all([ensureSession(), loaded()]);
    return { sessionId: info.session_id, engagementId: current.engagement_id };
  }

  return {
    load,
    ensureSession,
    get engagement() {
      return engagement;
    },
    client,
    async eligibility(activityId) {
      requireNonEmptyString(activityId, 'activityId');
      return client.activities.getEligibility({ path: { activityId }, session: await session() });
    },
    async spin(activityId) {
      requireNonEmptyString(activityId, 'activityId');
      const current = await session();
      const draw = await client.activities.validate({ path: { activityId }, body: { activity_type: 'spin_wheel' }, session: current });
      // Completing the drawn attempt by its id makes a retried completion return the first result.
      const completion = await client.activities.complete({
        path: { activityId },
        body: { activity_type: 'spin_wheel', ...(draw.attempt_id ? { attempt_id: draw.attempt_id } : {}) },
        session: current,
      });
      return { draw, completion };
    },
    async submitQuiz(activityId, answers) {
      requireNonEmptyString(activityId, 'activityId');
      if (!Array.isArray(answers)) throw new LoyaltyValidationError('answers', 'must be an array of { question_id, selected_option }');
      answers.forEach((answer, index) => {
        requireNonEmptyString(answer?.question_id, `answers[${index}].question_id`);
        if (!Number.isSafeInteger(answer.selected_option) || answer.selected_option < 0) {
          throw new LoyaltyValidationError(`answers[${index}].selected_option`, 'must be a whole number of 0 or more');
        }
      });
      return client.activities.complete({
        path: { activityId },
        body: { activity_type: 'quiz', payload: { answers }, attempt_id: attemptId() },
        session: await session(),
      });
    },
    async checkGates(body) {
      return client.gates.check({ body, session: await session() });
    },
    async recordScreenVisit(body) {
      return client.gates.recordScreenVisit({ body, session: await session() });
    },
    async balance() {
      return client.points.getBalance({ body: {}, session: await session() });
    },
    async badges() {
      return client.badges.getStatus({ session: await session() });
    },
    async rewards() {
      return client.rewards.listClaimed({ query: { limit: CLAIMED_REWARDS_PAGE_SIZE }, session: await session() });
    },
    subscribe(onEvent, onError, onReset, onOpen) {
      let closed = false;
      let close: (() => void) | null = null;
      session().then(
        (current) => {
          if (!closed) close = client.streamEvents({ onEvent, onError, onReset, onOpen, session: current });
        },
        (error) => onError?.(error),
      );
      return () => {
        closed = true;
        close?.();
      };
    },
  };
}
