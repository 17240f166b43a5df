import { createHash } from 'node:crypto';
import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { AppError, conflict, ruleViolation } from '../../platform/errors.js';
import { tenantEnvironment } from '../../platform/environments.js';
import { mayPublish } from '../../platform/publishing.js';
import { clock } from '../../platform/clock.js';
import { createBadgeInTx, updateBadgeInTx } from '../badges/index.js';
import { createStreakInTx, updateStreakInTx } from '../streaks/index.js';
import { createRuleInTx, ruleConfigFields, updateRuleInTx, type RuleRow } from '../rules/index.js';
import { createEngagementInTx, replaceEngagementDraftInTx, parseCondition, type EngagementDefinition } from '../engagements/index.js';
import { createRewardInTx, updateRewardInTx } from '../rewards/index.js';
import { readSandbox } from './service.js';

/**
 * Promotion: copies a sandbox's configuration (badge and streak definitions,
 * the reward catalogue, engagements, earn rules) to its live tenant in one
 * transaction, after showing the diff. Items are matched by a natural key (a
 * badge's or streak's code, a reward's id, an engagement's site slug, a rule's
 * name); live-only items are left alone. Every create and
 * update goes through the owning module's own use-case, so live gets exactly
 * the validation an admin's request would get. See docs/decisions/sandbox.md.
 */

/** A bound on each kind, so a diff is computed in memory and answered in one response. */
export const PROMOTION_ITEMS_MAX = 1000;
/** The audit row keeps the whole diff up to this size, and the keys only beyond it. */
const AUDIT_DETAILS_BYTES_MAX = 256 * 1024;
/**
 * In the order they are diffed and applied: what is named comes before what names it (rules and
 * engagements name badges, streaks and rewards), so a reference to an item promoted alongside resolves.
 */
export const KINDS = ['badges', 'streaks', 'rewards', 'engagements', 'rules'] as const;
export type Kind = (typeof KINDS)[number];

type Fields = Record<string, unknown>;

/** One configuration item as promotion compares it: the promotable fields, and what the live side needs checked. */
interface Item {
  key: string;
  id: string;
  fields: Fields;
  /** Live rules: status and budget spent; live rewards: claimed count (never compared, never copied). */
  state: Fields;
}

type Snapshot = Record<Kind, Item[]>;

export interface KindDiff {
  create: Array<{ key: string; sandbox_id: string; fields: Fields }>;
  update: Array<{ key: string; sandbox_id: string; live_id: string; changes: Record<string, { before: unknown; after: unknown }> }>;
  unchanged: number;
  live_only: Array<{ key: string; live_id: string }>;
  blocked: Array<{ key: string; sandbox_id: string | null; reason: string }>;
}

export interface PromotionDiff {
  live_tenant_id: string;
  sandbox_tenant_id: string;
  rules: KindDiff;
  engagements: KindDiff;
  rewards: KindDiff;
  badges: KindDiff;
  streaks: KindDiff;
  fingerprint: string;
}

/** JSON with object keys sorted at every depth: two equal values always give the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

// ---------------------------------------------------------------------------
// Reading one side. Read-only statements on the tables of the rules, engagements,
// rewards, badges and streaks modules: their list use-cases page through their own transactions,
// and promotion needs one snapshot of the live side inside the transaction that writes.

async function readSide(tx: Tx, tenantId: string, forUpdate: boolean): Promise<Snapshot> {
  const lock = forUpdate ? 'FOR UPDATE' : '';
  const limit = PROMOTION_ITEMS_MAX + 1;
  const rules = await tx.query(
    `SELECT id, name, description, status, trigger, event_name, schedule, conditions, effects, caps, budget_points, budget_spent,
            priority, stop_processing, starts_at, ends_at
     FROM earn_rules WHERE tenant_id = $1 ORDER BY name, id LIMIT ${limit} ${lock}`,
    [tenantId],
  );
  const engagements = await tx.query(
    `SELECT id, site_slug, status, definition FROM engagements WHERE tenant_id = $1 ORDER BY definition->>'site_slug', id LIMIT ${limit} ${lock}`,
    [tenantId],
  );
  const rewards = await tx.query(
    `SELECT id, name, description, image_url, type, metadata, code_source, code_prefix, inventory, claimed_count, available_until, valid_for_days, active
     FROM rewards WHERE tenant_id = $1 ORDER BY id LIMIT ${limit} ${lock}`,
    [tenantId],
  );
  const badges = await tx.query(`SELECT code, name, description, image_url FROM badge_definitions WHERE tenant_id = $1 ORDER BY code LIMIT ${limit} ${lock}`, [tenantId]);
  const streaks = await tx.query(
    `SELECT code, name, period, event_name, grace_periods FROM streak_definitions WHERE tenant_id = $1 ORDER BY code LIMIT ${limit} ${lock}`,
    [tenantId],
  );
  const results = { rules, engagements, rewards, badges, streaks };
  for (const [kind, result] of Object.entries(results)) {
    if (result.rows.length > PROMOTION_ITEMS_MAX) {
      throw ruleViolation(`a side holds more than ${PROMOTION_ITEMS_MAX} ${kind}; promotion compares at most that many of each kind`, 'PROMOTION_TOO_LARGE');
    }
  }
  return {
    rules: rules.rows.map((row) => ({
      key: row.name,
      id: row.id,
      fields: ruleConfigFields(row as RuleRow),
      state: { status: row.status, budget_spent: Number(row.budget_spent) },
    })),
    engagements: engagements.rows.map((row) => ({
      key: (row.definition as EngagementDefinition).site_slug,
      id: row.id,
      fields: { ...(row.definition as EngagementDefinition) },
      state: { status: row.status },
    })),
    rewards: rewards.rows.map((row) => ({
      key: row.id,
      id: row.id,
      fields: {
        name: row.name,
        description: row.description,
        image_url: row.image_url,
        type: row.type,
        metadata: row.metadata,
        code_source: row.code_source,
        code_prefix: row.code_prefix,
        inventory: row.inventory,
        available_until: iso(row.available_until),
        valid_for_days: row.valid_for_days,
        active: row.active,
      },
      state: { claimed_count: row.claimed_count },
    })),
    // A definition's code is its key and its id alike: nothing else names it.
    badges: badges.rows.map((row) => ({
      key: row.code,
      id: row.code,
      fields: { name: row.name, description: row.description, image_url: row.image_url },
      state: {},
    })),
    streaks: streaks.rows.map((row) => ({
      key: row.code,
      id: row.code,
      fields: { name: row.name, period: row.period, event_name: row.event_name, grace_periods: row.grace_periods },
      state: {},
    })),
  };
}

// ---------------------------------------------------------------------------
// The diff.

/** Fields that an update cannot change: the owning module refuses them, so such an item is blocked instead. */
const FIXED_FIELDS: Record<Kind, string[]> = { rules: ['trigger'], engagements: [], rewards: ['type', 'code_source', 'code_prefix'], badges: [], streaks: ['period'] };

function byKey(items: Item[]): Map<string, Item[]> {
  const map = new Map<string, Item[]>();
  for (const item of items) map.set(item.key, [...(map.get(item.key) ?? []), item]);
  return map;
}

function changedFields(before: Fields, after: Fields): KindDiff['update'][number]['changes'] {
  const changes: KindDiff['update'][number]['changes'] = {};
  for (const field of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    if (canonicalJson(before[field]) !== canonicalJson(after[field])) changes[field] = { before: before[field] ?? null, after: after[field] ?? null };
  }
  return changes;
}

const NATURAL_KEY: Record<Kind, string> = { rules: 'name', engagements: 'site slug', rewards: 'id', badges: 'code', streaks: 'code' };

/** The references an item makes to configuration that promotion copies first (rewards, badges, streaks). */
function references(kind: Kind, fields: Fields): { rewards: string[]; badges: string[]; streaks: string[] } {
  const out = { rewards: new Set<string>(), badges: new Set<string>(), streaks: new Set<string>() };
  if (kind === 'rules') {
    for (const effect of (fields.effects as Array<{ type: string; badge_code?: string; streak_code?: string }>) ?? []) {
      if (effect.badge_code) out.badges.add(effect.badge_code);
      if (effect.streak_code) out.streaks.add(effect.streak_code);
    }
  }
  if (kind === 'engagements') {
    const definition = fields as unknown as EngagementDefinition;
    for (const activity of definition.activities ?? []) {
      for (const prize of [...(activity.segments ?? []), ...(activity.on_completion ?? [])] as Array<{ reward_id?: string; badge_code?: string }>) {
        if (prize.reward_id) out.rewards.add(prize.reward_id);
        if (prize.badge_code) out.badges.add(prize.badge_code);
      }
    }
    for (const screen of definition.screens ?? []) {
      for (const text of screen.gate?.conditions ?? []) {
        const condition = parseCondition(text);
        if (condition?.kind === 'badge_earned') out.badges.add(condition.badgeCode);
      }
    }
  }
  return { rewards: [...out.rewards], badges: [...out.badges], streaks: [...out.streaks] };
}

function fingerprintOf(diff: Omit<PromotionDiff, 'fingerprint'>): string {
  return createHash('sha256').update(canonicalJson(diff)).digest('hex');
}

/** Compares the two sides, kind by kind in the order of KINDS. */
function diffSides(pair: { liveTenantId: string; sandboxTenantId: string }, sandbox: Snapshot, live: Snapshot): PromotionDiff {
  const diffs = {} as Record<Kind, KindDiff>;
  // Badges, streaks and rewards first: rules and engagements name them, and one that promotion cannot bring blocks what names it.
  for (const kind of KINDS) {
    const diff: KindDiff = { create: [], update: [], unchanged: 0, live_only: [], blocked: [] };
    const sandboxByKey = byKey(sandbox[kind]);
    const liveByKey = byKey(live[kind]);
    const block = (key: string, sandboxId: string | null, reason: string) => diff.blocked.push({ key, sandbox_id: sandboxId, reason });
    for (const [key, items] of sandboxByKey) {
      const matches = liveByKey.get(key) ?? [];
      if (items.length > 1) {
        for (const item of items) block(key, item.id, `${items.length} sandbox ${kind} share the ${NATURAL_KEY[kind]} ${JSON.stringify(key)}; promotion matches items by it, so make it unique in the sandbox`);
        continue;
      }
      const [item] = items;
      if (matches.length > 1) {
        block(key, item.id, `${matches.length} live ${kind} share the ${NATURAL_KEY[kind]} ${JSON.stringify(key)}; make it unique in live first`);
        continue;
      }
      const refused = refusal(kind, item, matches[0] ?? null, sandbox, live, diffs);
      if (refused) {
        block(key, item.id, refused);
        continue;
      }
      if (!matches[0]) {
        diff.create.push({ key, sandbox_id: item.id, fields: item.fields });
        continue;
      }
      const changes = changedFields(matches[0].fields, item.fields);
      if (Object.keys(changes).length === 0) diff.unchanged++;
      else diff.update.push({ key, sandbox_id: item.id, live_id: matches[0].id, changes });
    }
    for (const [key, items] of liveByKey) if (!sandboxByKey.has(key)) for (const item of items) diff.live_only.push({ key, live_id: item.id });
    diffs[kind] = diff;
  }
  const body = {
    live_tenant_id: pair.liveTenantId,
    sandbox_tenant_id: pair.sandboxTenantId,
    rules: diffs.rules,
    engagements: diffs.engagements,
    rewards: diffs.rewards,
    badges: diffs.badges,
    streaks: diffs.streaks,
  };
  return { ...body, fingerprint: fingerprintOf(body) };
}

/** Why an item cannot be promoted, or null. */
function refusal(kind: Kind, item: Item, match: Item | null, sandbox: Snapshot, live: Snapshot, earlier: Partial<Record<Kind, KindDiff>>): string | null {
  if (match) {
    const fixed = FIXED_FIELDS[kind].find((field) => canonicalJson(match.fields[field]) !== canonicalJson(item.fields[field]));
    if (fixed) return `its ${fixed} differs (live ${JSON.stringify(match.fields[fixed])}, sandbox ${JSON.stringify(item.fields[fixed])}) and cannot be changed on an existing item; rename one of them`;
    const budget = item.fields.budget_points as number | null | undefined;
    if (kind === 'rules' && typeof budget === 'number' && budget < (match.state.budget_spent as number)) {
      return `its budget_points ${budget} is below the ${match.state.budget_spent as number} points the live rule has already spent`;
    }
  }
  const refs = references(kind, item.fields);
  // A referenced item resolves when live holds it or this promotion brings it; the snapshots are whole (readSide refuses more than PROMOTION_ITEMS_MAX).
  for (const [named, codes] of [['reward', refs.rewards], ['badge', refs.badges], ['streak', refs.streaks]] as const) {
    const namedKind = `${named}s` as const;
    const blocked = new Set((earlier[namedKind]?.blocked ?? []).map((entry) => entry.key));
    const onEitherSide = new Set([...live[namedKind], ...sandbox[namedKind]].map((entry) => entry.key));
    for (const code of codes) {
      if (blocked.has(code)) return `it names the ${named} ${JSON.stringify(code)}, which is blocked`;
      if (!onEitherSide.has(code)) return `it names the ${named} ${JSON.stringify(code)}, which neither the sandbox nor live defines`;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Use-cases.

/** The diff between the sandbox's configuration and its live tenant's, asked from either side. */
export async function previewPromotion(db: Database, tenantId: string): Promise<PromotionDiff> {
  const pair = await readSandbox(db, tenantId);
  const sandbox = await db.tenant(pair.sandboxTenantId, (tx) => readSide(tx, pair.sandboxTenantId, false));
  const live = await db.tenant(pair.liveTenantId, (tx) => readSide(tx, pair.liveTenantId, false));
  return diffSides(pair, sandbox, live);
}

export interface PromotionRequest {
  auth: AuthContext;
  fingerprint: string;
  route: string;
  requestId: string;
}

export interface PromotionApplied {
  applied: Record<Kind, { created: number; updated: number }>;
  fingerprint: string;
  audit_id: string | null;
}

function withoutNulls(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined));
}

function afterValues(changes: KindDiff['update'][number]['changes']): Fields {
  return Object.fromEntries(Object.entries(changes).map(([field, change]) => [field, change.after]));
}

/**
 * Applies the diff the caller previewed, if it is still the diff: creates and
 * updates on the live tenant and the audit row, all in one transaction. Only
 * a credential of the live tenant may; a sandbox credential never changes live.
 */
export async function applyPromotion(db: Database, request: PromotionRequest): Promise<PromotionApplied> {
  const { auth } = request;
  if ((await tenantEnvironment(db, auth.tenantId)) !== 'live') {
    throw new AppError('forbidden', 'LIVE_CREDENTIAL_REQUIRED', "a promotion changes live configuration, so it is applied with an admin credential of the live tenant, never with a sandbox's (lk_test_) credential");
  }
  const pair = await readSandbox(db, auth.tenantId);
  const sandbox = await db.tenant(pair.sandboxTenantId, (tx) => readSide(tx, pair.sandboxTenantId, false));
  const sandboxById = Object.fromEntries(KINDS.map((kind) => [kind, new Map(sandbox[kind].map((item) => [item.id, item]))])) as Record<Kind, Map<string, Item>>;
  const live = pair.liveTenantId;
  return db.tenant(live, async (tx) => {
    // One promotion of a tenant at a time; the live rows read below stay locked until commit.
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('sandbox.promote:' || $1, 0))", [live]);
    const diff = diffSides(pair, sandbox, await readSide(tx, live, true));
    if (diff.fingerprint !== request.fingerprint) {
      throw conflict(
        'the configuration of the sandbox or of live changed since this diff was previewed (or it was already applied): nothing was changed; preview again (GET /api/v1/tenant/sandbox/promotion) and apply the new fingerprint',
        'PROMOTION_DIFF_CHANGED',
        { fingerprint: diff.fingerprint },
      );
    }
    const blocked = KINDS.flatMap((kind) => diff[kind].blocked.map((entry) => ({ kind, ...entry })));
    if (blocked.length > 0) {
      throw ruleViolation(`${blocked.length} item(s) cannot be promoted (see blocked): nothing was changed`, 'PROMOTION_BLOCKED', { blocked });
    }
    const draftsOnly = !mayPublish(auth);
    // In the order of KINDS, so that what a rule or an engagement names exists in live when it is written.
    for (const entry of diff.badges.create) await createBadgeInTx(tx, live, { ...withoutNulls(entry.fields), code: entry.key } as never);
    for (const entry of diff.badges.update) await updateBadgeInTx(tx, live, entry.key, afterValues(entry.changes) as never);
    for (const entry of diff.streaks.create) await createStreakInTx(tx, live, { ...withoutNulls(entry.fields), code: entry.key } as never);
    for (const entry of diff.streaks.update) await updateStreakInTx(tx, live, entry.key, afterValues(entry.changes) as never);
    for (const entry of diff.rewards.create) await createRewardInTx(tx, live, { ...withoutNulls(entry.fields), id: entry.key } as never);
    for (const entry of diff.rewards.update) await updateRewardInTx(tx, live, entry.live_id, afterValues(entry.changes) as never);
    // Engagements arrive as drafts; an update replaces the live draft and leaves a published snapshot serving until it is republished.
    for (const entry of diff.engagements.create) await createEngagementInTx(tx, live, entry.fields as never);
    for (const entry of diff.engagements.update) await replaceEngagementDraftInTx(tx, live, entry.live_id, sandboxById.engagements.get(entry.sandbox_id)!.fields as never);
    // Rules arrive as drafts; an update changes a live rule's content and never its status.
    for (const entry of diff.rules.create) await createRuleInTx(tx, live, { ...withoutNulls(entry.fields), status: 'draft' } as never, draftsOnly);
    for (const entry of diff.rules.update) await updateRuleInTx(tx, live, entry.live_id, afterValues(entry.changes) as never, draftsOnly);

    const applied = Object.fromEntries(KINDS.map((kind) => [kind, { created: diff[kind].create.length, updated: diff[kind].update.length }])) as PromotionApplied['applied'];
    const changed = KINDS.some((kind) => applied[kind].created + applied[kind].updated > 0);
    const auditId = changed ? await insertAuditRow(tx, request, pair.sandboxTenantId, diff, applied) : null;
    return { applied, fingerprint: diff.fingerprint, audit_id: auditId };
  });
}

/** The promotion's audit row, written in the promotion's own transaction: the change and its record commit together. */
async function insertAuditRow(tx: Tx, request: PromotionRequest, sandboxTenantId: string, diff: PromotionDiff, applied: PromotionApplied['applied']): Promise<string> {
  const { auth } = request;
  // Not passed through the log's redaction: the diff holds configuration only (no personal values, no credentials, no
  // code pools), which the log's readers may read through the admin routes anyway, and its natural keys must stay legible.
  let details: unknown = diff;
  if (canonicalJson(details).length > AUDIT_DETAILS_BYTES_MAX) {
    details = {
      truncated: true,
      fingerprint: diff.fingerprint,
      ...Object.fromEntries(KINDS.map((kind) => [kind, { create: diff[kind].create.map((e) => e.key), update: diff[kind].update.map((e) => e.key) }])),
    };
  }
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO audit_log (tenant_id, occurred_at, actor_type, actor_id, actor_label, action, method, route, resource_type, resource_id,
                            status, before, after, details, request_id)
     VALUES ($1, $2, $3, $4, $5, 'sandbox.promote', 'POST', $6, 'sandbox', $7, 200, NULL, $8, $9, $10)
     RETURNING id::text`,
    [
      auth.tenantId,
      clock.now(),
      auth.user ? 'user' : auth.kind === 'key' ? 'api_key' : 'system',
      auth.actorId,
      auth.user ? `${auth.user.email} (${auth.user.role})` : null,
      request.route,
      sandboxTenantId,
      JSON.stringify({ applied, fingerprint: diff.fingerprint }),
      JSON.stringify(details),
      request.requestId,
    ],
  );
  return rows[0].id;
}
