import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { assertNotInRunningExperimentInTx } from '../../platform/experiments.js';
import { publishingRequired } from '../../platform/publishing.js';
import { prefixedId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { missingBadgeCodesInTx } from '../badges/index.js';
import { missingStreakCodesInTx } from '../streaks/index.js';
import { validateConditions } from './conditions.js';
import { assertConditionSegmentsExistInTx } from './segment-conditions.js';
import * as store from './store.js';
import type { CreateRuleBody, Effect, UpdateRuleBody } from './schemas.js';

/**
 * Earn rules: their administration and the validation that makes a stored
 * rule always runnable. The engine that applies them is engine.ts.
 */
/** A rule's configuration: what an administrator sets, and what a sandbox promotion compares and copies. */
export function ruleConfigFields(row: Omit<store.RuleRow, 'id' | 'status' | 'budget_spent' | 'created_at' | 'updated_at'>) {
  return {
    name: row.name,
    description: row.description,
    trigger: row.trigger,
    event_name: row.event_name,
    schedule: row.schedule,
    conditions: row.conditions,
    effects: row.effects,
    caps: row.caps,
    budget_points: row.budget_points,
    priority: row.priority,
    stop_processing: row.stop_processing,
    starts_at: row.starts_at ? row.starts_at.toISOString() : null,
    ends_at: row.ends_at ? row.ends_at.toISOString() : null,
  };
}

export function toRuleResponse(row: store.RuleRow) {
  return {
    id: row.id,
    status: row.status,
    ...ruleConfigFields(row),
    budget_spent: row.budget_spent,
    budget_remaining: row.budget_points === null ? null : row.budget_points - row.budget_spent,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function validateEffect(effect: Effect, at: string, trigger: store.RuleDraft['trigger']): void {
  const present = (Object.keys(effect) as Array<keyof Effect>).filter((k) => k !== 'type' && effect[k] !== undefined);
  const allowed: Record<Effect['type'], Array<keyof Effect>> = {
    award_points: ['points', 'rate', 'max_points', 'reason'],
    award_badge: ['badge_code'],
    continue_streak: ['streak_code'],
  };
  const stray = present.find((k) => !allowed[effect.type].includes(k));
  // `effects[2]` names the effect in details; its fields' errors point at `/effects/2/<field>`.
  const field = (name: string, code: string, message: string) => ({ errors: [fieldError(`/${at.replace(/\[(\d+)\]/g, '/$1')}/${name}`, code, message)] });
  if (stray) throw invalid(`${at}: "${stray}" does not belong to an effect of type "${effect.type}"`, 'RULE_INVALID', field(stray, 'not_allowed', `does not belong to an effect of type ${effect.type}`));
  if (effect.type === 'award_points') {
    if ((effect.points === undefined) === (effect.rate === undefined)) {
      throw invalid(`${at}: award_points needs exactly one of "points" (fixed) or "rate" (from a property)`, 'RULE_INVALID', field('points', 'one_of', 'award_points needs exactly one of points (fixed) or rate (from a property)'));
    }
    if (effect.max_points !== undefined && effect.rate === undefined) throw invalid(`${at}: "max_points" applies to a rate only`, 'RULE_INVALID', field('max_points', 'not_allowed', 'applies to a rate only'));
    if (effect.rate && trigger !== 'event') throw invalid(`${at}: a rate reads an event property, but ${trigger} rules have no event`, 'RULE_INVALID', field('rate', 'not_allowed', `reads an event property, but ${trigger} rules have no event`));
  }
  if (effect.type === 'award_badge' && !effect.badge_code) throw invalid(`${at}: award_badge needs "badge_code"`, 'RULE_INVALID', field('badge_code', 'required', 'is required for award_badge'));
  if (effect.type === 'continue_streak' && !effect.streak_code) throw invalid(`${at}: continue_streak needs "streak_code"`, 'RULE_INVALID', field('streak_code', 'required', 'is required for continue_streak'));
}

/** Checks a complete rule; throws 400 for a malformed one and 422 for one that names badges or streaks that do not exist. */
export async function validateRuleInTx(tx: Tx, tenantId: string, rule: store.RuleDraft): Promise<void> {
  if (rule.trigger === 'event' && !rule.event_name) throw invalid('an event rule needs "event_name"', 'RULE_INVALID');
  if (rule.trigger !== 'event' && rule.event_name) throw invalid(`a ${rule.trigger} rule takes no "event_name"`, 'RULE_INVALID');
  if (rule.trigger === 'recurring' && !rule.schedule) throw invalid('a recurring rule needs "schedule" (daily, weekly or monthly)', 'RULE_INVALID');
  if (rule.trigger !== 'recurring' && rule.schedule) throw invalid(`a ${rule.trigger} rule takes no "schedule"`, 'RULE_INVALID');
  if (rule.starts_at && rule.ends_at && rule.starts_at >= rule.ends_at) throw invalid('"starts_at" must be before "ends_at"', 'RULE_INVALID');
  validateConditions(rule.conditions, 'conditions', rule.trigger === 'event');
  rule.effects.forEach((effect, index) => validateEffect(effect, `effects[${index}]`, rule.trigger));
  await assertConditionSegmentsExistInTx(tx, tenantId, rule.conditions);
  const badgeCodes = [...new Set(rule.effects.flatMap((e) => (e.type === 'award_badge' && e.badge_code ? [e.badge_code] : [])))];
  const streakCodes = [...new Set(rule.effects.flatMap((e) => (e.type === 'continue_streak' && e.streak_code ? [e.streak_code] : [])))];
  const missingBadges = await missingBadgeCodesInTx(tx, tenantId, badgeCodes);
  if (missingBadges.length > 0) {
    throw ruleViolation(`the rule awards the badge "${missingBadges.join('", "')}", which is not defined; create it first`, 'RULE_REFERENCES_MISSING_BADGE');
  }
  const missingStreaks = await missingStreakCodesInTx(tx, tenantId, streakCodes);
  if (missingStreaks.length > 0) {
    throw ruleViolation(`the rule continues the streak "${missingStreaks.join('", "')}", which is not defined; create it first`, 'RULE_REFERENCES_MISSING_STREAK');
  }
}

/** `draftsOnly`: the caller lacks the publishing permission, so the rule is a draft unless it asks for more (which is refused). */
export function draftFromBody(body: CreateRuleBody, draftsOnly = false): store.RuleDraft {
  return {
    name: body.name,
    description: body.description ?? null,
    status: body.status ?? (draftsOnly ? 'draft' : 'active'),
    trigger: body.trigger ?? 'event',
    event_name: body.event_name ?? null,
    schedule: body.schedule ?? null,
    conditions: body.conditions ?? {},
    effects: body.effects,
    caps: body.caps ?? {},
    budget_points: body.budget_points ?? null,
    priority: body.priority ?? 0,
    stop_processing: body.stop_processing ?? false,
    starts_at: body.starts_at ? new Date(body.starts_at) : null,
    ends_at: body.ends_at ? new Date(body.ends_at) : null,
  };
}

export async function createRule(db: Database, tenantId: string, body: CreateRuleBody, draftsOnly = false) {
  return db.tenant(tenantId, (tx) => createRuleInTx(tx, tenantId, body, draftsOnly));
}

/** Creates a rule in the caller's transaction (a sandbox promotion creates several in one). */
export async function createRuleInTx(tx: Tx, tenantId: string, body: CreateRuleBody, draftsOnly = false) {
  const draft = draftFromBody(body, draftsOnly);
  if (draftsOnly && draft.status !== 'draft') throw publishingRequired(`creating a rule with status "${draft.status}"`);
  await validateRuleInTx(tx, tenantId, draft);
  return toRuleResponse(await store.insertRule(tx, tenantId, prefixedId('rul'), draft, clock.now()));
}

export async function readRule(db: Database, tenantId: string, ruleId: string) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findRule(tx, tenantId, ruleId);
    if (!row) throw notFound(`earn rule "${ruleId}"`);
    return toRuleResponse(row);
  });
}

export async function listRules(db: Database, tenantId: string, query: { event_name?: string; status?: string; trigger?: string; limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listRules(tx, tenantId, { eventName: query.event_name, status: query.status, trigger: query.trigger }, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      rules: page.map(toRuleResponse),
      next_cursor: rows.length > limit ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.id }) : null,
    };
  });
}

/**
 * Changes a rule; the merged rule is validated as a whole. The trigger cannot change (create a new rule instead).
 * With `draftsOnly` (no publishing permission) only a draft may change, and it stays a draft.
 */
export async function updateRule(db: Database, tenantId: string, ruleId: string, body: UpdateRuleBody, draftsOnly = false, mayTakeDown = false) {
  return db.tenant(tenantId, (tx) => updateRuleInTx(tx, tenantId, ruleId, body, draftsOnly, mayTakeDown));
}

/** A change that only pauses an active rule: allowed to whoever may take things down, even where publishing needs a second person. */
const onlyPauses = (current: { status: string }, body: UpdateRuleBody): boolean =>
  current.status === 'active' && body.status === 'paused' && Object.entries(body).every(([key, value]) => key === 'status' || value === undefined);

/** `updateRule` in the caller's transaction. */
export async function updateRuleInTx(tx: Tx, tenantId: string, ruleId: string, body: UpdateRuleBody, draftsOnly = false, mayTakeDown = false) {
  const current = await store.findRule(tx, tenantId, ruleId, true);
  if (!current) throw notFound(`earn rule "${ruleId}"`);
  if (draftsOnly && mayTakeDown && onlyPauses(current, body)) draftsOnly = false;
  if (draftsOnly && current.status !== 'draft') throw publishingRequired(`changing a published rule (this one is ${current.status})`);
  if (draftsOnly && body.status !== undefined && body.status !== 'draft') throw publishingRequired(`setting a rule's status to "${body.status}"`);
  const pick = <K extends keyof UpdateRuleBody>(key: K) => body[key] !== undefined;
  const merged: store.RuleDraft = {
    name: body.name ?? current.name,
    description: pick('description') ? (body.description ?? null) : current.description,
    status: body.status ?? current.status,
    trigger: current.trigger,
    event_name: body.event_name ?? current.event_name,
    schedule: body.schedule ?? current.schedule,
    conditions: body.conditions ?? current.conditions,
    effects: body.effects ?? current.effects,
    caps: body.caps ?? current.caps,
    budget_points: pick('budget_points') ? (body.budget_points ?? null) : current.budget_points,
    priority: body.priority ?? current.priority,
    stop_processing: body.stop_processing ?? current.stop_processing,
    starts_at: pick('starts_at') ? (body.starts_at ? new Date(body.starts_at) : null) : current.starts_at,
    ends_at: pick('ends_at') ? (body.ends_at ? new Date(body.ends_at) : null) : current.ends_at,
  };
  if (merged.budget_points !== null && merged.budget_points < current.budget_spent) {
    throw ruleViolation(`the budget cannot be lowered below the ${current.budget_spent} points already spent`, 'RULE_BUDGET_BELOW_SPENT');
  }
  await validateRuleInTx(tx, tenantId, merged);
  return toRuleResponse(await store.replaceRule(tx, tenantId, ruleId, merged, clock.now()));
}

export async function deleteRule(db: Database, tenantId: string, ruleId: string, draftsOnly = false): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    if (draftsOnly) {
      const current = await store.findRule(tx, tenantId, ruleId, true);
      if (current && current.status !== 'draft') throw publishingRequired(`deleting a published rule (this one is ${current.status})`);
    }
    await assertNotInRunningExperimentInTx(tx, tenantId, 'rule', ruleId);
    if (!(await store.deleteRule(tx, tenantId, ruleId))) throw notFound(`earn rule "${ruleId}"`);
  });
}

/** What a review needs to know of a rule: its name, whether it is an unpublished draft, and a stamp that changes with every edit. */
export async function ruleForReviewInTx(tx: Tx, tenantId: string, ruleId: string, forUpdate = false) {
  const row = await store.findRule(tx, tenantId, ruleId, forUpdate);
  return row ? { name: row.name, draft: row.status === 'draft', revision: row.updated_at.toISOString() } : null;
}

/** Publishes a draft rule (draft → active): it applies to events processed from now on. The caller's transaction holds the review. */
export async function publishRuleInTx(tx: Tx, tenantId: string, ruleId: string) {
  const current = await store.findRule(tx, tenantId, ruleId, true);
  if (!current) throw notFound(`earn rule "${ruleId}"`);
  if (current.status !== 'draft') throw conflict(`the rule is already ${current.status}; only a draft is published through a review`, 'REVIEW_ITEM_NOT_DRAFT');
  // The catalogue may have changed since the draft was saved: the rule is checked again as a whole.
  await validateRuleInTx(tx, tenantId, current);
  return toRuleResponse(await store.replaceRule(tx, tenantId, ruleId, { ...current, status: 'active' }, clock.now()));
}
