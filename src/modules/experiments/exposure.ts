import type { Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import type { ExperimentSubjectType, ExperimentVariantAnswer } from '../../platform/experiments.js';
import { membershipsInTx } from '../segments/index.js';
import { assignVariant } from './assignment.js';
import * as store from './store.js';

/**
 * Exposure: the engines ask, for a subject they are about to apply, whether it
 * serves the participant. The tenant's running experiments are cached per
 * process for a few seconds (the engines ask for every event); this process
 * forgets a tenant's entry whenever it changes one of its experiments, so a
 * start, stop, allocation change or roll-out applies at once here and within
 * RUNNING_CACHE_TTL_MS in the other processes.
 */
export const RUNNING_CACHE_TTL_MS = 5_000;

interface RunningExperiment {
  id: string;
  holdoutPercent: number;
  variants: Array<{ key: string; subject_id: string; allocation_percent: number }>;
  segmentId: string | null;
}

interface CachedRunning {
  at: number;
  /** By subject type, then subject id: the running experiment that has it as a variant's subject. */
  bySubject: Record<ExperimentSubjectType, Map<string, RunningExperiment>>;
}

const cache = new Map<string, CachedRunning>();

export function forgetRunning(tenantId: string): void {
  cache.delete(tenantId);
}

async function running(tx: Tx, tenantId: string): Promise<CachedRunning> {
  const cached = cache.get(tenantId);
  if (cached && Date.now() - cached.at < RUNNING_CACHE_TTL_MS) return cached;
  const entry: CachedRunning = { at: Date.now(), bySubject: { rule: new Map(), multiplier: new Map(), engagement: new Map() } };
  for (const row of await store.runningExperiments(tx, tenantId)) {
    const experiment: RunningExperiment = { id: row.id, holdoutPercent: row.holdout_percent, variants: row.variants, segmentId: row.segment_id };
    for (const variant of row.variants) entry.bySubject[row.subject_type].set(variant.subject_id, experiment);
  }
  cache.set(tenantId, entry);
  return entry;
}

/** The subjects of the type in running experiments. */
export async function runningSubjectsInTx(tx: Tx, tenantId: string, subjectType: ExperimentSubjectType): Promise<ReadonlySet<string>> {
  return new Set((await running(tx, tenantId)).bySubject[subjectType].keys());
}

/**
 * Whether the subject serves the participant (see platform/experiments.ts):
 * the recorded variant, or the computed one recorded now at first exposure.
 */
export async function experimentVariantInTx(
  tx: Tx,
  tenantId: string,
  subjectType: ExperimentSubjectType,
  subjectId: string,
  participantId: string,
): Promise<ExperimentVariantAnswer | null> {
  const experiment = (await running(tx, tenantId)).bySubject[subjectType].get(subjectId);
  if (!experiment) return null;
  const answer = (variantKey: string, recorded: boolean): ExperimentVariantAnswer => {
    const subject = experiment.variants.find((v) => v.key === variantKey)?.subject_id ?? null;
    return { experimentId: experiment.id, variantKey, applies: subject === subjectId, variantSubjectId: subject, recorded };
  };
  // A processing batch decides each participant's variant once (an event considers every variant's rule).
  const key = `experiments:decided:${experiment.id}:${participantId}`;
  const { variantKey, recorded } = await (tx.batch ? tx.batch.cached(key, () => decide(tx, tenantId, experiment, participantId)) : decide(tx, tenantId, experiment, participantId));
  return answer(variantKey, recorded);
}

async function decide(tx: Tx, tenantId: string, experiment: RunningExperiment, participantId: string): Promise<{ variantKey: string; recorded: boolean }> {
  if (experiment.segmentId !== null) {
    const members = await membershipsInTx(tx, tenantId, participantId, [experiment.segmentId]);
    if (!members.has(experiment.segmentId)) return { variantKey: experiment.variants[0].key, recorded: false };
  }
  const proposed = assignVariant(experiment.id, participantId, experiment.holdoutPercent, experiment.variants);
  const { variantKey } = await store.recordAssignment(tx, tenantId, experiment.id, participantId, proposed, clock.now(tenantId));
  return { variantKey, recorded: true };
}

