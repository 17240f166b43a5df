import type { Tx } from '../../platform/db.js';
import { batchCached } from '../../platform/batch.js';
import { awardBadgeInTx, earnedBadgeCodesInTx } from '../badges/index.js';
import { continueStreaksInTx } from '../streaks/index.js';
import { conditionFailure, readPath, readingOf, type ConditionFailure, type FactReading, type FactSource } from './conditions.js';
import { nearestNames } from './nearest-names.js';
import { eventRulesWithVariants, otherVariantVerdict } from './experiment-variants.js';
import { points } from './ports.js';
import { segmentIdsOf, segmentMemberships } from './segment-conditions.js';
import * as store from './store.js';
import type { Caps, Effect } from './schemas.js';

/**
 * The rules engine: applies the matching earn rules to one processed event
 * (or to one participant on a scheduled rule's occurrence), inside the
 * caller's transaction. Everything it changes — usage counters, the rule's
 * budget, the ledger, badges, streaks and their outgoing events — commits
 * or rolls back with that transaction.
 */
export interface RuleEvent {
  eventId: string;
  eventName: string;
  participantId: string;
  engagementId: string | null;
  properties: Record<string, unknown>;
  occurredAt: Date;
}

export interface AppliedRule {
  rule_id: string;
  rule_name: string;
  points: number;
  /** Points before caps and budget (after the multiplier). */
  points_wanted: number;
  multiplier: number | null;
  badges_awarded: string[];
  streaks_continued: string[];
}

/** Why a rule did or did not award, for one event. */
export type RuleResult = 'applied' | 'condition_failed' | 'capped' | 'budget_spent' | 'rate_unusable' | 'outside_window' | 'stopped' | 'other_variant';

/**
 * One rule considered for an event and what came of it. The effects ran
 * (`badges_awarded` and `streaks_continued` are set) for `applied`, for
 * `budget_spent`, for `rate_unusable` and for a `points` cap; a `times` cap,
 * a failed condition, the window and a stop keep the rule from running.
 */
export interface RuleVerdict {
  rule_id: string;
  rule_name: string;
  result: RuleResult;
  points: number;
  points_wanted?: number;
  multiplier?: number | null;
  badges_awarded?: string[];
  streaks_continued?: string[];
  condition?: ConditionFailure;
  cap?: CapHit;
  budget?: { budget_points: number };
  rate?: FactReading;
  window?: { starts_at: string | null; ends_at: string | null; event_is: 'before_start' | 'after_end' };
  stopped_by?: string;
  /** `other_variant`: the rule is a variant of a running experiment, and the participant is assigned to another variant (or the holdout). */
  experiment?: { experiment_id: string; variant_key: string };
}

export interface RulesOutcome {
  points_awarded: number;
  /** Rules whose result is `capped`. */
  capped_rules: string[];
  /** Every active rule listening to the event's name, in the order considered, with why it did or did not award. */
  rules: RuleVerdict[];
  /** Set when no active rule listens to the event's name. */
  unmatched_event_name?: { nearest: string[] };
}

const CAP_PERIODS: Array<[keyof Caps, 'day' | 'week' | 'lifetime']> = [
  ['per_day', 'day'],
  ['per_week', 'week'],
  ['lifetime', 'lifetime'],
];

function roundPoints(value: number, rounding: 'floor' | 'round' | 'ceil'): number {
  // A tiny epsilon absorbs binary fractions (0.1 * 30 = 3.0000000000000004 must not ceil to 4).
  const epsilon = 1e-9;
  if (rounding === 'ceil') return Math.ceil(value - epsilon);
  if (rounding === 'round') return Math.round(value);
  return Math.floor(value + epsilon);
}

/** The points an award_points effect asks for before multipliers, caps and budget. */
export function effectPoints(effect: Effect, properties: Record<string, unknown>): number {
  if (effect.points !== undefined) return effect.points;
  if (!effect.rate) return 0;
  const value = readPath(properties, effect.rate.property.split('.').slice(1));
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return 0;
  const points = roundPoints(value * effect.rate.points_per_unit, effect.rate.rounding ?? 'floor');
  return Math.max(0, effect.max_points !== undefined ? Math.min(points, effect.max_points) : points);
}

/** Participant attributes for conditions, loaded once per event and only when a condition reads one. */
export function participantAttributes(tx: Tx, tenantId: string, participantId: string): () => Promise<Record<string, unknown>> {
  let loaded: Promise<Record<string, unknown>> | null = null;
  return () => {
    loaded ??= (async () => {
      const balance = await points.readBalanceInTx(tx, tenantId, participantId);
      const badges = await earnedBadgeCodesInTx(tx, tenantId, participantId);
      return { lifetime_points: balance.lifetime, available_points: balance.available, badges };
    })();
    return loaded;
  };
}

export interface RuleTarget {
  participantId: string;
  engagementId: string | null;
  properties: Record<string, unknown>;
  /** When the behaviour happened: the event timestamp, or the occurrence time of a scheduled rule. */
  at: Date;
  /** The event, for multipliers; null for scheduled rules, which multipliers do not raise. */
  eventName: string | null;
  /** What the ledger memo names as the cause. */
  memo: string;
}

/**
 * What applying a rule reads and changes outside the rule itself: its usage
 * counters, its budget, and the effects. Live processing uses `liveState`
 * (the database, in the caller's transaction); a simulation passes state kept
 * in memory, so that it takes every decision with the same code as live
 * processing and changes nothing.
 */
export interface RuleState {
  /** The participant's usage of the rule in the periods `at` falls in, held for this event (live: row-locked). */
  usage(rule: store.RuleRow, participantId: string, at: Date, periods: Array<'day' | 'week' | 'lifetime'>): Promise<store.UsageRow[]>;
  addUsage(rule: store.RuleRow, participantId: string, usage: store.UsageRow[], points: number): Promise<void>;
  /** Takes up to `wanted` points from the rule's budget; returns what was taken. */
  spendBudget(rule: store.RuleRow, wanted: number): Promise<number>;
  award(rule: store.RuleRow, target: RuleTarget, points: number, multiplier: number | null, reason: string): Promise<void>;
  /** Whether the badge was awarded now (false when the participant had it). */
  awardBadge(rule: store.RuleRow, participantId: string, badgeCode: string): Promise<boolean>;
  /** The codes of the streaks continued. */
  continueStreaks(participantId: string, streakCodes: string[], at: Date): Promise<string[]>;
}

/** The state of live processing: the database, in `tx`. */
export function liveState(tx: Tx, tenantId: string): RuleState {
  return {
    usage: (rule, participantId, at, periods) => store.lockUsage(tx, tenantId, rule.id, participantId, at, periods),
    addUsage: (rule, participantId, usage, points) => store.addUsage(tx, tenantId, rule.id, participantId, usage, points),
    spendBudget: (rule, wanted) => store.spendBudget(tx, tenantId, rule.id, wanted),
    award: (rule, target, amount, multiplier, reason) =>
      points.awardInTx(tx, tenantId, {
        participantId: target.participantId,
        amount,
        reason,
        type: 'award',
        memo: target.memo,
        source: { kind: 'rule', id: rule.id },
        engagementId: target.engagementId,
        multiplier,
      }),
    awardBadge: async (rule, participantId, badgeCode) =>
      (await awardBadgeInTx(tx, tenantId, { participantId, badgeCode, source: { kind: 'rule', id: rule.id } })).awarded,
    continueStreaks: async (participantId, streakCodes, at) => (await continueStreaksInTx(tx, tenantId, { participantId, streakCodes, at })).map((s) => s.streakCode),
  };
}

/** The cap that kept a rule from applying (`times`) or cut its points (`points`). */
export interface CapHit {
  period: keyof Caps;
  limit: 'times' | 'points';
  /** The cap's value. */
  max: number;
  /** The participant's usage of the rule in the period before this event. */
  used: number;
}

type RuleApplication = { applied: AppliedRule; cap: CapHit | null; budgetCut: boolean; rateUnusable: FactReading | null } | { capped: CapHit };

/**
 * Applies one rule whose conditions hold: caps, multiplier, budget, then the
 * effects. Returns null when a `times` cap keeps it from applying.
 */
export async function applyRuleInTx(
  tx: Tx,
  tenantId: string,
  rule: store.RuleRow,
  target: RuleTarget,
  multiplierOf: () => Promise<{ multiplier: number; multiplierId: string | null }>,
  state: RuleState = liveState(tx, tenantId),
): Promise<AppliedRule | null> {
  const application = await applyRule(rule, target, multiplierOf, state);
  return 'applied' in application ? application.applied : null;
}

/** The rate effect whose property gave no points: not a positive number. */
function unusableRate(effects: Effect[], properties: Record<string, unknown>): FactReading | null {
  for (const effect of effects) {
    if (!effect.rate) continue;
    const value = readPath(properties, effect.rate.property.split('.').slice(1));
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return readingOf(effect.rate.property, value);
  }
  return null;
}

/** applyRuleInTx, saying which cap, budget or rate limited the rule. */
async function applyRule(
  rule: store.RuleRow,
  target: RuleTarget,
  multiplierOf: () => Promise<{ multiplier: number; multiplierId: string | null }>,
  state: RuleState,
): Promise<RuleApplication> {
  const pointEffects = rule.effects.filter((e) => e.type === 'award_points');
  let wanted = pointEffects.reduce((sum, e) => sum + effectPoints(e, target.properties), 0);
  const rateUnusable = wanted === 0 ? unusableRate(pointEffects, target.properties) : null;
  let multiplier: number | null = null;
  if (wanted > 0 && target.eventName !== null) {
    const found = await multiplierOf();
    if (found.multiplierId !== null && found.multiplier !== 1) {
      multiplier = found.multiplier;
      wanted = Math.round(wanted * found.multiplier);
    }
  }
  const pointsWanted = wanted;

  const capped = CAP_PERIODS.filter(([key]) => rule.caps[key] !== undefined);
  let usage: store.UsageRow[] = [];
  let pointsCap: CapHit | null = null;
  if (capped.length > 0) {
    usage = await state.usage(rule, target.participantId, target.at, capped.map(([, period]) => period));
    for (const [key, period] of capped) {
      const cap = rule.caps[key]!;
      const used = usage.find((u) => u.period === period)!;
      if (cap.times !== undefined && used.times >= cap.times) return { capped: { period: key, limit: 'times', max: cap.times, used: used.times } };
      if (cap.points !== undefined && cap.points - used.points < wanted) {
        wanted = Math.max(0, cap.points - used.points);
        pointsCap = { period: key, limit: 'points', max: cap.points, used: used.points };
      }
    }
  }
  const beforeBudget = wanted;
  if (wanted > 0 && rule.budget_points !== null) wanted = await state.spendBudget(rule, wanted);

  if (wanted > 0) await state.award(rule, target, wanted, multiplier, pointEffects.find((e) => e.reason)?.reason ?? rule.name);

  const badgesAwarded: string[] = [];
  for (const effect of rule.effects) {
    if (effect.type !== 'award_badge') continue;
    if (await state.awardBadge(rule, target.participantId, effect.badge_code!)) badgesAwarded.push(effect.badge_code!);
  }
  const streakCodes = rule.effects.flatMap((e) => (e.type === 'continue_streak' ? [e.streak_code!] : []));
  const streaks = streakCodes.length > 0 ? await state.continueStreaks(target.participantId, streakCodes, target.at) : [];

  await state.addUsage(rule, target.participantId, usage, wanted);
  const applied: AppliedRule = {
    rule_id: rule.id,
    rule_name: rule.name,
    points: wanted,
    points_wanted: pointsWanted,
    multiplier,
    badges_awarded: badgesAwarded,
    streaks_continued: streaks,
  };
  return { applied, cap: pointsCap, budgetCut: wanted < beforeBudget, rateUnusable };
}

/** The verdict of a rule whose conditions held, from how it applied. */
function verdictOf(rule: store.RuleRow, application: RuleApplication): RuleVerdict {
  const named = { rule_id: rule.id, rule_name: rule.name };
  if ('capped' in application) return { ...named, result: 'capped', points: 0, cap: application.capped };
  const { applied, cap, budgetCut, rateUnusable } = application;
  const { rule_id: _id, rule_name: _name, ...ran } = applied;
  if (applied.points === 0 && rateUnusable) return { ...named, result: 'rate_unusable', ...ran, rate: rateUnusable };
  if (applied.points === 0 && budgetCut) return { ...named, result: 'budget_spent', ...ran, budget: { budget_points: rule.budget_points! } };
  if (applied.points === 0 && cap) return { ...named, result: 'capped', ...ran, cap };
  return {
    ...named,
    result: 'applied',
    ...ran,
    ...(cap && { cap }),
    ...(budgetCut && { budget: { budget_points: rule.budget_points! } }),
  };
}

function outsideWindow(rule: store.RuleRow, at: Date): RuleVerdict | null {
  const before = rule.starts_at !== null && at < rule.starts_at;
  if (!before && !(rule.ends_at !== null && at >= rule.ends_at)) return null;
  return {
    rule_id: rule.id,
    rule_name: rule.name,
    result: 'outside_window',
    points: 0,
    window: { starts_at: rule.starts_at?.toISOString() ?? null, ends_at: rule.ends_at?.toISOString() ?? null, event_is: before ? 'before_start' : 'after_end' },
  };
}

/**
 * Applies every matching event rule, highest priority first, honouring
 * stop_processing, and says of each active rule listening to the event's name
 * why it did or did not award; when none listens, the nearest names that do.
 */
export async function applyEarnRulesInTx(tx: Tx, tenantId: string, event: RuleEvent): Promise<RulesOutcome> {
  const outcome: RulesOutcome = { points_awarded: 0, capped_rules: [], rules: [] };
  const rules = await eventRulesWithVariants(tx, tenantId, event.eventName);
  if (rules.length === 0) {
    // Computed once per event name in a processing batch, where events no rule listens to are common.
    const nearest = async () => nearestNames(event.eventName, await store.liveEventNames(tx, tenantId));
    outcome.unmatched_event_name = { nearest: await (batchCached(tx, `rules:nearest:${tenantId}:${event.eventName}`, nearest) ?? nearest()) };
    return outcome;
  }
  const source: FactSource = {
    properties: event.properties,
    participant: participantAttributes(tx, tenantId, event.participantId),
    segments: segmentMemberships(tx, tenantId, event.participantId, segmentIdsOf(rules)),
  };
  let multiplier: Promise<{ multiplier: number; multiplierId: string | null }> | null = null;
  const multiplierOf = () => {
    multiplier ??= points.multiplierForEventInTx(tx, tenantId, {
      participantId: event.participantId,
      eventName: event.eventName,
      attributes: event.properties,
      at: event.occurredAt,
    });
    return multiplier;
  };
  const target: RuleTarget = {
    participantId: event.participantId,
    engagementId: event.engagementId,
    properties: event.properties,
    at: event.occurredAt,
    eventName: event.eventName,
    memo: `event ${event.eventId}`,
  };
  let stoppedBy: string | null = null;
  for (const rule of rules) {
    const outside = outsideWindow(rule, event.occurredAt);
    if (outside) {
      outcome.rules.push(outside);
      continue;
    }
    if (stoppedBy !== null) {
      outcome.rules.push({ rule_id: rule.id, rule_name: rule.name, result: 'stopped', points: 0, stopped_by: stoppedBy });
      continue;
    }
    // A variant of a running experiment serves only its variant's participants (issue 36).
    const otherVariant = await otherVariantVerdict(tx, tenantId, rule, event.participantId);
    if (otherVariant) {
      outcome.rules.push(otherVariant);
      continue;
    }
    const failed = await conditionFailure(rule.conditions, source);
    if (failed) {
      outcome.rules.push({ rule_id: rule.id, rule_name: rule.name, result: 'condition_failed', points: 0, condition: failed });
      continue;
    }
    const application = await applyRule(rule, target, multiplierOf, liveState(tx, tenantId));
    const verdict = verdictOf(rule, application);
    outcome.rules.push(verdict);
    if (verdict.result === 'capped') outcome.capped_rules.push(rule.id);
    if (!('applied' in application)) continue;
    outcome.points_awarded += application.applied.points;
    if (rule.stop_processing) stoppedBy = rule.id;
  }
  return outcome;
}
