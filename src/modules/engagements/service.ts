import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { uuid, randomToken } from '../../platform/ids.js';
import { PLAN_QUOTAS, type Plan } from '../../platform/plans.js';
import { readTenantLimits } from '../../platform/tenant-limits.js';
import { announceCredentialChange } from '../../platform/auth.js';
import { missingRewardIdsInTx } from '../rewards/index.js';
import { missingBadgeCodesInTx } from '../badges/index.js';
import { parseCondition } from './conditions.js';
import { checkTargetingInTx, segmentOutcomeInTx } from './targeting.js';
import type {
  Activity,
  AttributeRule,
  CreateEngagementBody,
  EngagementDefinition,
  TriggerRules,
  UpdateEngagementBody,
} from './schemas.js';
import * as store from './store.js';
import type { EngagementRow } from './store.js';

/** Defaults applied to every stored activity, so the runtime never guesses. */
export const ACTIVITY_DEFAULTS = { max_attempts: 1, cooldown_seconds: 0, pass_percent: 70 } as const;

// ---------------------------------------------------------------------------
// Definitions: defaults and the cross-field rules a schema cannot express.

function normalize(body: CreateEngagementBody): EngagementDefinition {
  const activities = (body.activities ?? []).map((activity): Activity => {
    const normalized: Activity = {
      ...activity,
      max_attempts: activity.max_attempts ?? ACTIVITY_DEFAULTS.max_attempts,
      cooldown_seconds: activity.cooldown_seconds ?? ACTIVITY_DEFAULTS.cooldown_seconds,
      on_completion: (activity.on_completion ?? []).map((action) => ({ ...action, when: action.when ?? 'always' })),
    };
    if (activity.type === 'quiz') normalized.pass_percent = activity.pass_percent ?? ACTIVITY_DEFAULTS.pass_percent;
    return normalized;
  });
  return {
    name: body.name,
    site_slug: body.site_slug,
    ...(body.description !== undefined ? { description: body.description } : {}),
    screens: body.screens ?? [],
    components: body.components ?? [],
    canvas: body.canvas ?? {},
    activities,
    trigger_rules: body.trigger_rules ?? {},
    allow_anonymous_sessions: body.allow_anonymous_sessions ?? false,
    ...(body.embed_origins !== undefined ? { embed_origins: body.embed_origins } : {}),
    segment_id: body.segment_id ?? null,
  };
}

function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) (seen.has(value) ? repeated : seen).add(value);
  return [...repeated];
}

function checkActivity(activity: Activity, where: string): void {
  if (activity.type === 'spin_wheel') {
    if (!activity.segments) throw invalid(`${where} is a spin_wheel and needs segments`);
    if (activity.questions || activity.pass_percent !== undefined) throw invalid(`${where} is a spin_wheel; questions and pass_percent belong to quizzes`);
    activity.segments.forEach((segment, index) => {
      const at = `${where}.segments[${index}]`;
      const needs = { points: 'prize_value', reward: 'reward_id', badge: 'badge_code', none: null } as const;
      const needed = needs[segment.prize_type];
      for (const field of ['prize_value', 'reward_id', 'badge_code'] as const) {
        if (field === needed && segment[field] === undefined) throw invalid(`${at} has prize_type ${segment.prize_type} and needs ${field}`);
        if (field !== needed && segment[field] !== undefined) throw invalid(`${at} has prize_type ${segment.prize_type}; ${field} does not belong to it`);
      }
    });
  } else {
    if (!activity.questions) throw invalid(`${where} is a quiz and needs questions`);
    if (activity.segments) throw invalid(`${where} is a quiz; segments belong to spin wheels`);
    const repeated = duplicates(activity.questions.map((q) => q.id));
    if (repeated.length) throw invalid(`${where} repeats the question id ${JSON.stringify(repeated[0])}`);
    activity.questions.forEach((question, index) => {
      if (question.correct_option >= question.options.length) {
        throw invalid(`${where}.questions[${index}].correct_option ${question.correct_option} is outside its ${question.options.length} options`);
      }
    });
  }
  (activity.on_completion ?? []).forEach((action, index) => {
    const at = `${where}.on_completion[${index}]`;
    const needs = { award_points: 'amount', award_reward: 'reward_id', grant_badge: 'badge_code' } as const;
    for (const field of ['amount', 'reward_id', 'badge_code'] as const) {
      if (field === needs[action.type] && action[field] === undefined) throw invalid(`${at} is ${action.type} and needs ${field}`);
      if (field !== needs[action.type] && action[field] !== undefined) throw invalid(`${at} is ${action.type}; ${field} does not belong to it`);
    }
    if (action.reason !== undefined && action.type !== 'award_points') throw invalid(`${at}: reason belongs to award_points only`);
  });
}

function checkTriggerRules(rules: TriggerRules): void {
  if (rules.starts_at && rules.ends_at && new Date(rules.starts_at) >= new Date(rules.ends_at)) {
    throw invalid('trigger_rules.starts_at must be before trigger_rules.ends_at');
  }
  (rules.participant_attributes ?? []).forEach((rule, index) => {
    const at = `trigger_rules.participant_attributes[${index}]`;
    if (rule.operator === 'exists') return;
    if (rule.value === undefined) throw invalid(`${at} with operator ${rule.operator} needs a value`);
    if (rule.operator === 'in' && !Array.isArray(rule.value)) throw invalid(`${at} with operator in needs an array value`);
    if (['gt', 'gte', 'lt', 'lte'].includes(rule.operator) && typeof rule.value !== 'number') throw invalid(`${at} with operator ${rule.operator} needs a number value`);
  });
}

function checkDefinition(definition: EngagementDefinition): void {
  const screenIds = definition.screens.map((s) => s.id);
  const activityIds = definition.activities.map((a) => a.id);
  let repeated = duplicates(screenIds);
  if (repeated.length) throw invalid(`screens repeat the id ${JSON.stringify(repeated[0])}`);
  repeated = duplicates(activityIds);
  if (repeated.length) throw invalid(`activities repeat the id ${JSON.stringify(repeated[0])}`);
  definition.activities.forEach((activity, index) => checkActivity(activity, `activities[${index}]`));
  definition.screens.forEach((screen, index) => {
    for (const text of screen.gate?.conditions ?? []) {
      const condition = parseCondition(text);
      const at = `screens[${index}].gate.conditions`;
      if (!condition) throw invalid(`${at} has the unknown condition ${JSON.stringify(text)}`);
      if (condition.kind === 'screen_visited' && !screenIds.includes(condition.screenId)) {
        throw invalid(`${at}: ${JSON.stringify(text)} names a screen this engagement does not have`);
      }
      if (condition.kind === 'activity_completed' && condition.activityId && !activityIds.includes(condition.activityId)) {
        throw invalid(`${at}: ${JSON.stringify(text)} names an activity this engagement does not have`);
      }
    }
  });
  checkTriggerRules(definition.trigger_rules);
}

function referencedRewardIds(definition: EngagementDefinition): string[] {
  const ids = new Set<string>();
  for (const activity of definition.activities) {
    for (const segment of activity.segments ?? []) if (segment.reward_id) ids.add(segment.reward_id);
    for (const action of activity.on_completion ?? []) if (action.reward_id) ids.add(action.reward_id);
  }
  return [...ids];
}

function referencedBadgeCodes(definition: EngagementDefinition): string[] {
  const codes = new Set<string>();
  for (const activity of definition.activities) {
    for (const segment of activity.segments ?? []) if (segment.badge_code) codes.add(segment.badge_code);
    for (const action of activity.on_completion ?? []) if (action.badge_code) codes.add(action.badge_code);
  }
  for (const screen of definition.screens) {
    for (const text of screen.gate?.conditions ?? []) {
      const condition = parseCondition(text);
      if (condition?.kind === 'badge_earned') codes.add(condition.badgeCode);
    }
  }
  return [...codes];
}

async function checkReferences(tx: Tx, tenantId: string, definition: EngagementDefinition): Promise<void> {
  const missing = await missingRewardIdsInTx(tx, tenantId, referencedRewardIds(definition));
  if (missing.length) throw ruleViolation(`the reward ${JSON.stringify(missing[0])} is not in the reward catalogue`, 'UNKNOWN_REWARD');
  const codes = referencedBadgeCodes(definition);
  if (codes.length) {
    const unknown = await missingBadgeCodesInTx(tx, tenantId, codes);
    if (unknown.length) throw ruleViolation(`the badge ${JSON.stringify(unknown[0])} is not defined`, 'UNKNOWN_BADGE');
  }
  await checkTargetingInTx(tx, tenantId, definition);
}

// ---------------------------------------------------------------------------
// Admin use-cases.

export function present(row: EngagementRow) {
  return {
    id: row.id,
    status: row.status,
    version: row.version,
    published_version: row.published_version,
    has_unpublished_changes: row.status === 'draft' || row.published_version !== row.version,
    published_at: row.published_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...row.definition,
    segment_id: row.definition.segment_id ?? null,
  };
}

export async function createEngagement(db: Database, tenantId: string, body: CreateEngagementBody) {
  return db.tenant(tenantId, (tx) => createEngagementInTx(tx, tenantId, body));
}

/** Creates a draft engagement in the caller's transaction (a sandbox promotion creates several in one). */
export async function createEngagementInTx(tx: Tx, tenantId: string, body: CreateEngagementBody) {
  const definition = normalize(body);
  checkDefinition(definition);
  await checkReferences(tx, tenantId, definition);
  return present(await store.insertEngagement(tx, tenantId, uuid(), definition, clock.now()));
}

/**
 * Replaces an engagement's draft definition as a whole (fields absent from `body` are removed, not kept),
 * in the caller's transaction. A published engagement keeps serving its published snapshot.
 */
export async function replaceEngagementDraftInTx(tx: Tx, tenantId: string, id: string, body: CreateEngagementBody) {
  await lockedEngagement(tx, tenantId, id);
  const definition = normalize(body);
  checkDefinition(definition);
  await checkReferences(tx, tenantId, definition);
  return present(await store.updateDefinition(tx, tenantId, id, definition, clock.now()));
}

async function lockedEngagement(tx: Tx, tenantId: string, id: string): Promise<EngagementRow> {
  const row = await store.findEngagement(tx, tenantId, id, true);
  if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  return row;
}

export async function updateEngagement(db: Database, tenantId: string, id: string, body: UpdateEngagementBody) {
  return db.tenant(tenantId, async (tx) => {
    const row = await lockedEngagement(tx, tenantId, id);
    const definition = normalize({ ...row.definition, ...body } as CreateEngagementBody);
    checkDefinition(definition);
    await checkReferences(tx, tenantId, definition);
    return present(await store.updateDefinition(tx, tenantId, id, definition, clock.now()));
  });
}

export async function readEngagement(db: Database, tenantId: string, id: string) {
  const row = await db.tenant(tenantId, (tx) => store.findEngagement(tx, tenantId, id));
  if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  return present(row);
}

export async function listEngagements(db: Database, tenantId: string, query: { status?: string; site_slug?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'uuid' });
  const rows = await db.tenant(tenantId, (tx) =>
    store.listEngagements(tx, tenantId, { status: query.status, siteSlug: query.site_slug, after, limit: query.limit + 1 }),
  );
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    engagements: page.map(present),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.id }) : null,
  };
}

export async function publishEngagement(db: Database, tenantId: string, plan: Plan, id: string) {
  return db.tenant(tenantId, (tx) => publishEngagementInTx(tx, tenantId, plan, id));
}

/** Publishes the current draft inside the caller's transaction (a review's approval publishes through here). */
export async function publishEngagementInTx(tx: Tx, tenantId: string, plan: Plan, id: string) {
  const row = await lockedEngagement(tx, tenantId, id);
  // The catalogue may have changed since the draft was saved.
  await checkReferences(tx, tenantId, row.definition);
  // The plan's figure or the tenant's own (set by the operator), read in this transaction.
  const limit = (await readTenantLimits(tx, tenantId))?.limits.concurrentEngagements ?? null;
  const quota = limit ? limit.value : PLAN_QUOTAS[plan].concurrentEngagements;
  if (row.status === 'draft' && quota !== null) {
    await store.lockPublications(tx, tenantId);
    if ((await store.countPublished(tx, tenantId, id)) >= quota) {
      const whose = limit?.source === 'override' ? "the tenant's limit" : `the ${plan} plan`;
      throw ruleViolation(`${whose} allows ${quota} published engagements at a time; unpublish one first`, 'PLAN_QUOTA_EXCEEDED');
    }
  }
  try {
    const published = present(await store.publish(tx, tenantId, id, clock.now()));
    // Public routes find an engagement's tenant, and whether it is published, in a cache that this notice empties.
    await announceCredentialChange(tx, 'engagement published');
    return published;
  } catch (error) {
    // The transaction is lost either way: a site clash is answered as a conflict.
    if ((error as { code?: string }).code === '23505') {
      throw conflict(`another engagement is already published on the site ${JSON.stringify(row.definition.site_slug)}; unpublish it first`, 'SITE_IN_USE');
    }
    throw error;
  }
}

/**
 * What a review needs to know of an engagement: its name, whether its draft holds anything unpublished
 * (a new engagement, or changes to a published one), and a stamp that changes with every edit.
 */
export async function engagementForReviewInTx(tx: Tx, tenantId: string, id: string, forUpdate = false) {
  const row = await store.findEngagement(tx, tenantId, id, forUpdate);
  return row ? { name: row.definition.name, draft: present(row).has_unpublished_changes, revision: row.updated_at.toISOString(), published: row.status !== 'draft' } : null;
}

export async function unpublishEngagement(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, (tx) => unpublishEngagementInTx(tx, tenantId, id));
}

/** Unpublishes in the caller's transaction (an experiment's roll-out stops the other variants' engagements). */
export async function unpublishEngagementInTx(tx: Tx, tenantId: string, id: string) {
  const row = await lockedEngagement(tx, tenantId, id);
  if (row.status === 'draft') throw conflict('the engagement is not published', 'ENGAGEMENT_NOT_PUBLISHED');
  const unpublished = present(await store.unpublish(tx, tenantId, id));
  await announceCredentialChange(tx, 'engagement unpublished');
  return unpublished;
}

// ---------------------------------------------------------------------------
// Public reads: only the published snapshot, with every secret removed.

/** An engagement definition without server secrets: what the runtime may see (the published site, or a draft's preview). */
export function redact(definition: EngagementDefinition) {
  return {
    name: definition.name,
    ...(definition.description !== undefined ? { description: definition.description } : {}),
    screens: definition.screens.map((screen) => ({
      id: screen.id,
      ...(screen.name !== undefined ? { name: screen.name } : {}),
      components: screen.components ?? [],
      gated: !!screen.gate,
    })),
    components: definition.components,
    canvas: definition.canvas,
    activities: definition.activities.map((activity) => ({
      id: activity.id,
      type: activity.type,
      ...(activity.name !== undefined ? { name: activity.name } : {}),
      max_attempts: activity.max_attempts ?? ACTIVITY_DEFAULTS.max_attempts,
      cooldown_seconds: activity.cooldown_seconds ?? ACTIVITY_DEFAULTS.cooldown_seconds,
      ...(activity.segments
        ? {
            segments: activity.segments.map((segment, index) => ({
              index,
              label: segment.label,
              prize_type: segment.prize_type,
              ...(segment.color !== undefined ? { color: segment.color } : {}),
            })),
          }
        : {}),
      ...(activity.questions ? { questions: activity.questions.map((q) => ({ id: q.id, text: q.text, options: q.options })) } : {}),
      ...(activity.pass_percent !== undefined ? { pass_percent: activity.pass_percent } : {}),
    })),
    allow_anonymous_sessions: definition.allow_anonymous_sessions,
  };
}

async function publishedSite(db: Database, tenantSlug: string, siteSlug: string): Promise<{ tenantId: string; row: EngagementRow }> {
  const tenant = await store.tenantBySlug(db.system, tenantSlug);
  // An unknown tenant and an unknown site answer alike, so slugs cannot be probed.
  const row = tenant ? await db.tenant(tenant.id, (tx) => store.findPublishedBySite(tx, tenant.id, siteSlug)) : null;
  if (!tenant || !row) throw notFound('published engagement for this site', 'SITE_NOT_FOUND');
  return { tenantId: tenant.id, row };
}

export async function readSite(db: Database, tenantSlug: string, siteSlug: string) {
  const { row } = await publishedSite(db, tenantSlug, siteSlug);
  return {
    engagement_id: row.id,
    tenant_slug: tenantSlug,
    site_slug: row.site_slug,
    version: row.published_version!,
    published_at: row.published_at!.toISOString(),
    ...redact(row.published_definition!),
  };
}

/**
 * What the runtime page of a site needs before it is served: the published
 * engagement and who may frame it. Null when the site serves nothing.
 */
export async function embedSettings(db: Database, tenantSlug: string, siteSlug: string): Promise<{ engagementId: string; name: string; embedOrigins: string[] | null } | null> {
  try {
    const { row } = await publishedSite(db, tenantSlug, siteSlug);
    return { engagementId: row.id, name: row.published_definition!.name, embedOrigins: row.published_definition!.embed_origins ?? null };
  } catch (error) {
    if (error instanceof AppError && error.code === 'SITE_NOT_FOUND') return null;
    throw error;
  }
}

export const ANONYMOUS_PREFIX = 'anon_';

/**
 * Anonymous visitors of a published engagement that allows it get a session
 * of a new participant `anon_<random>`. The session is the visitor's only
 * handle on that participant; the tenant may later link it to a known
 * participant on its own side.
 */
export async function createAnonymousSession(
  db: Database,
  tenantSlug: string,
  siteSlug: string,
  displayName: string | undefined,
  ttlSeconds: number,
  createSession: (
    db: Database,
    tenantId: string,
    input: { participant_id: string; engagement_id: string; display_name?: string },
    ttl: number,
  ) => Promise<{ session_id: string; participant_id: string; engagement_id: string; expires_at: string }>,
) {
  const { tenantId, row } = await publishedSite(db, tenantSlug, siteSlug);
  if (!row.published_definition!.allow_anonymous_sessions) {
    throw new AppError('forbidden', 'ANONYMOUS_SESSIONS_DISABLED', 'this engagement does not give sessions to anonymous visitors; the tenant\'s server issues them');
  }
  const participantId = `${ANONYMOUS_PREFIX}${randomToken(18)}`;
  return createSession(db, tenantId, { participant_id: participantId, engagement_id: row.id, ...(displayName ? { display_name: displayName } : {}) }, ttlSeconds);
}

export async function embedUrl(db: Database, tenantId: string, id: string, publicBaseUrl: string | null) {
  const found = await db.tenant(tenantId, async (tx) => {
    const row = await store.findEngagement(tx, tenantId, id);
    return row ? { row, tenantSlug: await store.tenantSlug(tx, tenantId) } : null;
  });
  if (!found) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  const base = (publicBaseUrl ?? '').replace(/\/+$/, '');
  const site = `${encodeURIComponent(found.tenantSlug)}/${encodeURIComponent(found.row.site_slug)}`;
  return {
    engagement_id: found.row.id,
    status: found.row.status,
    embed_url: `${base}/embed/${site}?engagement_id=${found.row.id}`,
    definition_url: `${base}/api/v1/sites/${site}`,
    tenant_slug: found.tenantSlug,
    site_slug: found.row.site_slug,
  };
}

// ---------------------------------------------------------------------------
// Trigger rules: eligibility and impressions.

const PERIOD_MS = { day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000, lifetime: null } as const;

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 'i');
}

function attributeHolds(rule: AttributeRule, attributes: Record<string, unknown>): boolean {
  const actual = attributes[rule.attribute];
  switch (rule.operator) {
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'eq':
      return actual === rule.value;
    case 'neq':
      return actual !== rule.value;
    case 'in':
      return Array.isArray(rule.value) && rule.value.includes(actual);
    default: {
      if (typeof actual !== 'number' || typeof rule.value !== 'number') return false;
      const bound = rule.value;
      const comparisons: Record<string, boolean> = { gt: actual > bound, gte: actual >= bound, lt: actual < bound, lte: actual <= bound };
      return comparisons[rule.operator] ?? false;
    }
  }
}

function visitorOf(input: { participant_id?: string; visitor_id?: string }): string | null {
  if (input.participant_id !== undefined && input.visitor_id !== undefined) throw invalid('give participant_id or visitor_id, not both');
  return input.participant_id ?? input.visitor_id ?? null;
}

function parseAttributes(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('attributes must be a JSON object, for example {"country":"DE"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('attributes must be a JSON object, for example {"country":"DE"}');
  return parsed as Record<string, unknown>;
}

async function impressionsInPeriod(tx: Tx, tenantId: string, engagementId: string, visitorId: string | null, rules: TriggerRules, now: Date) {
  const cap = rules.frequency_cap;
  if (!cap || visitorId === null) return { used: 0, max: cap?.max_impressions ?? null };
  const period = PERIOD_MS[cap.period];
  const since = period === null ? null : new Date(now.getTime() - period);
  return { used: await store.countImpressions(tx, tenantId, engagementId, visitorId, since), max: cap.max_impressions };
}

export async function checkEligibility(
  db: Database,
  tenantId: string,
  query: { engagement_id: string; url?: string; participant_id?: string; visitor_id?: string; attributes?: string },
) {
  const visitorId = visitorOf(query);
  const attributes = parseAttributes(query.attributes);
  const now = clock.now();
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findEngagement(tx, tenantId, query.engagement_id);
    if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
    const outcomes: Array<{ rule: 'published' | 'url' | 'time_window' | 'frequency_cap' | 'participant_attributes' | 'segment'; passed: boolean; detail: string }> = [];
    const published = row.status === 'published';
    outcomes.push({ rule: 'published', passed: published, detail: published ? 'the engagement is published' : 'the engagement is a draft' });
    const live = row.published_definition ?? row.definition;
    const rules = live.trigger_rules;
    const patterns = rules.url_patterns ?? [];
    if (patterns.length) {
      const matched = query.url !== undefined && patterns.some((p) => globToRegExp(p).test(query.url!));
      outcomes.push({ rule: 'url', passed: matched, detail: query.url === undefined ? 'url is needed to match url_patterns' : matched ? 'the url matches' : 'the url matches no pattern' });
    }
    if (rules.starts_at || rules.ends_at) {
      const early = rules.starts_at !== undefined && now < new Date(rules.starts_at);
      const late = rules.ends_at !== undefined && now >= new Date(rules.ends_at);
      outcomes.push({ rule: 'time_window', passed: !early && !late, detail: early ? 'the window has not opened yet' : late ? 'the window has closed' : 'inside the window' });
    }
    const impressions = await impressionsInPeriod(tx, tenantId, row.id, visitorId, rules, now);
    if (rules.frequency_cap) {
      const passed = visitorId !== null && impressions.used < rules.frequency_cap.max_impressions;
      outcomes.push({
        rule: 'frequency_cap',
        passed,
        detail:
          visitorId === null
            ? 'participant_id or visitor_id is needed to apply the frequency cap'
            : `${impressions.used} of ${rules.frequency_cap.max_impressions} impressions used (${rules.frequency_cap.period})`,
      });
    }
    const attributeRules = rules.participant_attributes ?? [];
    if (attributeRules.length) {
      const failed = attributeRules.find((rule) => !attributeHolds(rule, attributes));
      outcomes.push({
        rule: 'participant_attributes',
        passed: !failed,
        detail: failed ? `the attribute ${JSON.stringify(failed.attribute)} does not satisfy ${failed.operator}` : 'every attribute rule holds',
      });
    }
    if (live.segment_id) outcomes.push(await segmentOutcomeInTx(tx, tenantId, live.segment_id, query.participant_id));
    return {
      engagement_id: row.id,
      eligible: outcomes.every((o) => o.passed),
      rules: outcomes,
      impressions_used: impressions.used,
      max_impressions: impressions.max,
      evaluated_at: now.toISOString(),
    };
  });
}

export async function recordImpression(db: Database, tenantId: string, body: { engagement_id: string; participant_id?: string; visitor_id?: string; url?: string }) {
  const visitorId = visitorOf(body);
  if (visitorId === null) throw invalid('participant_id or visitor_id is required');
  const now = clock.now();
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findEngagement(tx, tenantId, body.engagement_id);
    if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
    if (row.status !== 'published') throw ruleViolation('the engagement is a draft; impressions are recorded for published engagements only', 'ENGAGEMENT_NOT_PUBLISHED');
    const id = uuid();
    await store.insertImpression(tx, tenantId, { id, engagementId: row.id, visitorId, url: body.url ?? null, at: now });
    const impressions = await impressionsInPeriod(tx, tenantId, row.id, visitorId, row.published_definition!.trigger_rules, now);
    return {
      impression_id: id,
      engagement_id: row.id,
      visitor_id: visitorId,
      recorded_at: now.toISOString(),
      impressions_used: impressions.max === null ? await store.countImpressions(tx, tenantId, row.id, visitorId, null) : impressions.used,
      max_impressions: impressions.max,
    };
  });
}
