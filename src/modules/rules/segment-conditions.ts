import type { Tx } from '../../platform/db.js';
import { fieldError, invalid } from '../../platform/errors.js';
import { assertSegmentsExistInTx, isSegmentId, membershipsInTx } from '../segments/index.js';
import { SEGMENT_IDS_MAX, type Condition, type Conditions } from './schemas.js';

/**
 * The `participant.segment` condition: whether the participant is in at
 * least one (`in`) or in none (`not_in`) of the listed segments. Membership
 * comes from the segments module (`membershipsInTx`), loaded once per
 * participant and event for every segment the event's rules name, and only
 * when a condition reads it.
 */
export const SEGMENT_FACT = 'participant.segment';
export const SEGMENT_OPERATORS = ['in', 'not_in'] as const;

/** The ids of the listed segments the participant is in (a subset of `segmentIds`). */
export type SegmentMemberships = (segmentIds: readonly string[]) => Promise<ReadonlySet<string>>;

const segmentIdsOfConditions = (conditions: Conditions): string[] =>
  [...(conditions.all ?? []), ...(conditions.any ?? [])].flatMap((c) => (c.fact === SEGMENT_FACT && Array.isArray(c.value) ? (c.value as string[]) : []));

/** Every segment the rules' conditions name, without repeats. */
export function segmentIdsOf(rules: ReadonlyArray<{ conditions: Conditions }>): string[] {
  return [...new Set(rules.flatMap((r) => segmentIdsOfConditions(r.conditions)))];
}

/**
 * A participant's memberships, read lazily: the first question reads every
 * segment in `expected` (the segments the rules at hand name) in one call;
 * a segment asked about later that was not among them is read then, once.
 */
export function segmentMemberships(tx: Tx, tenantId: string, participantId: string, expected: readonly string[] = []): SegmentMemberships {
  const known = new Map<string, boolean>();
  return async (segmentIds) => {
    const unknown = [...new Set([...(known.size === 0 ? expected : []), ...segmentIds])].filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const members = await membershipsInTx(tx, tenantId, participantId, unknown);
      for (const id of unknown) known.set(id, members.has(id));
    }
    return new Set(segmentIds.filter((id) => known.get(id)));
  };
}

/** The fact a segment condition reads: the listed segments the participant is in, in the order listed. */
export async function segmentFactValue(condition: Condition, memberships: SegmentMemberships): Promise<string[]> {
  const listed = condition.value as string[];
  const members = await memberships(listed);
  return listed.filter((id) => members.has(id));
}

/** `in`: a member of at least one listed segment; `not_in`: of none. */
export function segmentConditionHolds(condition: Condition, memberOf: string[]): boolean {
  return condition.operator === 'in' ? memberOf.length > 0 : memberOf.length === 0;
}

/** Checks a segment condition's operator and value; throws a 400 naming the field (`pointer` is the condition's, `/conditions/all/0`). */
export function validateSegmentCondition(condition: Condition, at: string, pointer: string): void {
  if (!(SEGMENT_OPERATORS as readonly string[]).includes(condition.operator)) {
    throw invalid(`${at}: ${SEGMENT_FACT} takes the operator "in" or "not_in", not "${condition.operator}"`, 'RULE_INVALID', {
      errors: [fieldError(`${pointer}/operator`, 'enum', `must be in or not_in for ${SEGMENT_FACT}`, { allowed: [...SEGMENT_OPERATORS] })],
    });
  }
  const value = condition.value;
  if (!Array.isArray(value) || value.length === 0 || value.length > SEGMENT_IDS_MAX || !value.every((v) => typeof v === 'string' && isSegmentId(v))) {
    throw invalid(`${at}: ${SEGMENT_FACT} needs a list of 1 to ${SEGMENT_IDS_MAX} segment ids (seg_…)`, 'RULE_INVALID', {
      errors: [fieldError(`${pointer}/value`, 'type_list', `needs a list of 1 to ${SEGMENT_IDS_MAX} segment ids (seg_…)`)],
    });
  }
}

/** Checks that every segment the conditions name is one of the tenant's; else a 422 SEGMENT_NOT_FOUND at `/<where>/<group>/<index>/value`. */
export async function assertConditionSegmentsExistInTx(tx: Tx, tenantId: string, conditions: Conditions, where = 'conditions'): Promise<void> {
  for (const group of ['all', 'any'] as const) {
    for (const [index, condition] of (conditions[group] ?? []).entries()) {
      if (condition.fact !== SEGMENT_FACT || !Array.isArray(condition.value)) continue;
      await assertSegmentsExistInTx(tx, tenantId, condition.value as string[], `/${where}/${group}/${index}/value`);
    }
  }
}
