import type { Fact } from '../../platform/facts.js';
import type { Condition, StoredObjective } from './schemas.js';

/**
 * Objective evaluators. Two kinds:
 *
 * - counting evaluators (`activity_count`, `event_count`) add 1 for each fact
 *   that matches; the fact id guards against counting a fact twice;
 * - state evaluators (`points_earned`, `badge_earned`) read what the
 *   participant holds (points awarded since enrollment, badges earned) and are
 *   recomputed whenever the participant's enrollments are evaluated.
 */
export const COUNTING_EVALUATORS = new Set(['activity_count', 'event_count']);
export const STATE_EVALUATORS = new Set(['points_earned', 'badge_earned']);

function readPath(properties: Record<string, unknown>, path: string): unknown {
  let value: unknown = properties;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function sameValue(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  // Property values arrive as JSON; numbers sent as strings still compare equal to numbers.
  if (typeof left === 'number' && typeof right === 'string') return right.trim() !== '' && Number(right) === left;
  if (typeof left === 'string' && typeof right === 'number') return left.trim() !== '' && Number(left) === right;
  return false;
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

export function conditionHolds(condition: Condition, properties: Record<string, unknown>): boolean {
  const actual = readPath(properties, condition.property);
  switch (condition.op) {
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'eq':
      return sameValue(actual, condition.value);
    case 'neq':
      return actual !== undefined && !sameValue(actual, condition.value);
    case 'in':
      return Array.isArray(condition.value) && condition.value.some((candidate) => sameValue(actual, candidate));
    default: {
      const left = asNumber(actual);
      const right = asNumber(condition.value);
      if (left === null || right === null) return false;
      if (condition.op === 'gt') return left > right;
      if (condition.op === 'gte') return left >= right;
      if (condition.op === 'lt') return left < right;
      return left <= right;
    }
  }
}

/** The amount a fact adds to a counting objective: 1 when it matches, else 0. */
export function countingIncrement(objective: StoredObjective, fact: Fact): number {
  if (objective.evaluator === 'activity_count') {
    if (fact.source !== 'activity') return 0;
    if (objective.activity_id !== undefined && fact.activityId !== objective.activity_id) return 0;
    if (objective.activity_type !== undefined && fact.properties.activity_type !== objective.activity_type) return 0;
    return 1;
  }
  if (objective.evaluator === 'event_count') {
    if (fact.name !== objective.event_name) return 0;
    return (objective.conditions ?? []).every((condition) => conditionHolds(condition, fact.properties)) ? 1 : 0;
  }
  return 0;
}

/** What a participant holds, for the state evaluators. */
export interface ParticipantHoldings {
  /** Points awarded, each with its time (to count those since enrollment). */
  awards: Array<{ amount: number; at: Date }>;
  /** Badges earned, each with its time. */
  badges: Array<{ code: string; at: Date }>;
}

export function stateValue(objective: StoredObjective, holdings: ParticipantHoldings, enrolledAt: Date): number {
  if (objective.evaluator === 'points_earned') {
    return holdings.awards.filter((a) => a.at >= enrolledAt).reduce((sum, a) => sum + a.amount, 0);
  }
  if (objective.evaluator === 'badge_earned') {
    if (objective.badge_code !== undefined) return holdings.badges.some((b) => b.code === objective.badge_code) ? 1 : 0;
    return new Set(holdings.badges.filter((b) => b.at >= enrolledAt).map((b) => b.code)).size;
  }
  return 0;
}

export interface ProgressSummary {
  overallProgress: number;
  score: number;
  objectivesCompleted: number;
  completed: boolean;
}

/**
 * Overall progress is the weighted mean of each objective's share of its
 * target (capped at 1); the score is that progress on a 0 to 100 scale with
 * two decimals, so that scores compare across challenges.
 */
export function summarise(objectives: StoredObjective[], progress: Record<string, number>): ProgressSummary {
  let weighted = 0;
  let weights = 0;
  let objectivesCompleted = 0;
  for (const objective of objectives) {
    const current = progress[objective.id] ?? 0;
    const share = Math.min(current / objective.target, 1);
    weighted += share * objective.weight;
    weights += objective.weight;
    if (current >= objective.target) objectivesCompleted += 1;
  }
  const overallProgress = weights === 0 ? 0 : Math.min(1, Math.round((weighted / weights) * 1e6) / 1e6);
  return {
    overallProgress,
    score: Math.round(overallProgress * 10_000) / 100,
    objectivesCompleted,
    completed: objectivesCompleted === objectives.length,
  };
}
