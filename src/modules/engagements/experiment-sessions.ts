import type { Tx } from '../../platform/db.js';
import { AppError } from '../../platform/errors.js';
import { experimentVariantInTx, runningExperimentSubjectsInTx } from '../../platform/experiments.js';

/**
 * Engagements in experiments (issue 36): while an experiment runs on
 * engagements, a participant's first session for any of its engagements
 * exposes them (their assignment is recorded), and a session is issued only
 * for the engagement of their variant. For another variant's engagement the
 * answer is 403 `EXPERIMENT_OTHER_VARIANT` with `engagement_id`, the one to
 * ask a session for instead. A refusal rolls back with the session's
 * transaction, so the participant is recorded at their first issued session
 * (the same variant: assignment is deterministic). An engagement experiment
 * has no holdout (a refused session is no experience a site can show; the
 * experiments module refuses one), but a holdout answer is refused all the
 * same (403 `EXPERIMENT_HOLDOUT`). A participant outside the experiment's
 * segment gets the control's. A draft preview's test participant is in no
 * experiment. docs/decisions.md, "Experiments (issue 36)".
 */
export async function assertSessionVariantInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string, isPreview: () => Promise<boolean>): Promise<void> {
  // No query at all when no running experiment has the engagement (a short cache).
  if (!(await runningExperimentSubjectsInTx(tx, tenantId, 'engagement')).has(engagementId)) return;
  if (await isPreview()) return;
  const answer = await experimentVariantInTx(tx, tenantId, 'engagement', engagementId, participantId);
  if (!answer || answer.applies) return;
  const extra = { experiment_id: answer.experimentId, variant_key: answer.variantKey };
  if (answer.variantSubjectId === null) {
    throw new AppError('forbidden', 'EXPERIMENT_HOLDOUT', `the participant is in the holdout of the experiment ${answer.experimentId}, which gets none of its engagements`, extra);
  }
  throw new AppError(
    'forbidden',
    'EXPERIMENT_OTHER_VARIANT',
    `the participant is assigned to the variant "${answer.variantKey}" of the experiment ${answer.experimentId}, whose engagement is ${answer.variantSubjectId}: ask a session for that one`,
    { ...extra, engagement_id: answer.variantSubjectId },
  );
}
