import type { Tx } from '../../platform/db.js';
import { awardBadgeInTx, earnedBadgeCodesInTx } from '../badges/index.js';
import { continueStreaksInTx } from '../streaks/index.js';
import { conditionsHold, readPath, type FactSource } from './conditions.js';
import { points } from './ports.js';
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

export interface RulesOutcome {
  rules: AppliedRule[];
  points_awarded: number;
  /** Rules whose conditions held but a `times` cap kept them from applying. */
  capped_rules: string[];
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
  const pointEffects = rule.effects.filter((e) => e.type === 'award_points');
  let wanted = pointEffects.reduce((sum, e) => sum + effectPoints(e, target.properties), 0);
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
  if (capped.length > 0) {
    usage = await state.usage(rule, target.participantId, target.at, capped.map(([, period]) => period));
    for (const [key, period] of capped) {
      const cap = rule.caps[key]!;
      const used = usage.find((u) => u.period === period)!;
      if (cap.times !== undefined && used.times >= cap.times) return null;
      if (cap.points !== undefined) wanted = Math.max(0, Math.min(wanted, cap.points - used.points));
    }
  }
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
  return {
    rule_id: rule.id,
    rule_name: rule.name,
    points: wanted,
    points_wanted: pointsWanted,
    multiplier,
    badges_awarded: badgesAwarded,
    streaks_continued: streaks,
  };
}

/** Applies every matching event rule, highest priority first, honouring stop_processing. */
export async function applyEarnRulesInTx(tx: Tx, tenantId: string, event: RuleEvent): Promise<RulesOutcome> {
  const outcome: RulesOutcome = { rules: [], points_awarded: 0, capped_rules: [] };
  const rules = await store.activeEventRules(tx, tenantId, event.eventName, event.occurredAt);
  if (rules.length === 0) return outcome;
  const source: FactSource = { properties: event.properties, participant: participantAttributes(tx, tenantId, event.participantId) };
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
  for (const rule of rules) {
    if (!(await conditionsHold(rule.conditions, source))) continue;
    const applied = await applyRuleInTx(tx, tenantId, rule, target, multiplierOf);
    if (!applied) {
      outcome.capped_rules.push(rule.id);
      continue;
    }
    outcome.rules.push(applied);
    outcome.points_awarded += applied.points;
    if (rule.stop_processing) break;
  }
  return outcome;
}
