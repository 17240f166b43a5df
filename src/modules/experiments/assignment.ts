import { createHash } from 'node:crypto';

/**
 * Deterministic assignment (issue 36): a participant's variant is a pure
 * function of the experiment id and the participant id, so every process
 * computes the same answer without asking anyone. The bucket is the first
 * 4 bytes of sha256(`${experimentId}:${participantId}`) as an unsigned
 * 32-bit integer, mod 10,000 (a hundredth of a percent each); the holdout
 * takes buckets [0, holdout_percent × 100), then each variant in order takes
 * allocation_percent × 100 buckets.
 *
 * Only the first exposure asks this function: the answer is then recorded
 * (experiment_assignments) and the record wins for ever after, so a later
 * change of the allocation moves nobody already exposed.
 */
export const HOLDOUT = 'holdout';
export const BUCKETS = 10_000;

export interface AllocatedVariant {
  key: string;
  allocation_percent: number;
}

/** The participant's bucket in the experiment, 0 to 9,999. */
export function bucketOf(experimentId: string, participantId: string): number {
  const digest = createHash('sha256').update(`${experimentId}:${participantId}`).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

/** The key of the participant's variant, or `holdout`. Allocations with the holdout sum to 100 (validated at every change). */
export function assignVariant(experimentId: string, participantId: string, holdoutPercent: number, variants: readonly AllocatedVariant[]): string {
  const bucket = bucketOf(experimentId, participantId);
  let upper = Math.round(holdoutPercent * 100);
  if (bucket < upper) return HOLDOUT;
  for (const variant of variants) {
    upper += Math.round(variant.allocation_percent * 100);
    if (bucket < upper) return variant.key;
  }
  // Unreachable when the allocation sums to 100; the last variant takes any rounding rest.
  return variants[variants.length - 1]?.key ?? HOLDOUT;
}
