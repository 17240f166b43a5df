import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid } from '../../platform/errors.js';
import { mayPublish } from '../../platform/publishing.js';
import { publishRuleInTx, updateRuleInTx } from '../rules/index.js';
import { unpublishEngagementInTx } from '../engagements/index.js';
import { endMultiplierInTx } from '../points/index.js';
import { submitReviewInTx } from '../publishing/index.js';
import { forgetRunning } from './exposure.js';
import { findSubjectInTx } from './ports.js';
import { existingExperimentInTx, present } from './service.js';
import * as store from './store.js';

/**
 * Ending an experiment by rolling out a variant (issue 36): the variant's
 * subject goes to everyone through the normal way to publish, the other
 * variants' subjects stop, and the experiment ends with `rolled_out_variant`.
 * See docs/decisions.md, "Experiments (issue 36): assignment, exposure, roll-out".
 */
type StopAction = 'paused' | 'unpublished' | 'ended' | 'left_draft';

/** The winner's publication: published now by whoever may publish directly, else a review request, as for any draft. */
async function publishWinner(tx: Tx, auth: AuthContext, row: store.ExperimentRow, subjectId: string, experimentName: string) {
  const subject = await findSubjectInTx(tx, auth.tenantId, row.subject_type, subjectId);
  if (!subject) throw conflict(`the variant's ${row.subject_type} ${subjectId} no longer exists`, 'EXPERIMENT_SUBJECT_NOT_FOUND');
  if (!subject.draft || row.subject_type === 'multiplier') return { publication: 'already_live' as const, review_id: null };
  // Only a rule can be an unpublished draft here: an engagement variant is published before the experiment starts.
  if (mayPublish(auth)) {
    await publishRuleInTx(tx, auth.tenantId, subjectId);
    return { publication: 'published' as const, review_id: null };
  }
  const review = await submitReviewInTx(tx, auth, { kind: 'rule', id: subjectId, note: `Rolled out from the experiment “${experimentName}” (${row.id}).` });
  return { publication: 'review_requested' as const, review_id: review.id };
}

async function stopSubject(tx: Tx, tenantId: string, row: store.ExperimentRow, subjectId: string): Promise<StopAction> {
  const subject = await findSubjectInTx(tx, tenantId, row.subject_type, subjectId);
  if (row.subject_type === 'multiplier') {
    await endMultiplierInTx(tx, tenantId, subjectId, clock.now(tenantId));
    return 'ended';
  }
  // A draft served only the experiment's participants: ended with it, it serves nobody.
  if (!subject || (subject.draft && !subject.live)) return 'left_draft';
  if (!subject.live) return 'paused';
  if (row.subject_type === 'rule') {
    await updateRuleInTx(tx, tenantId, subjectId, { status: 'paused' }, false, true);
    return 'paused';
  }
  await unpublishEngagementInTx(tx, tenantId, subjectId);
  return 'unpublished';
}

export async function rolloutExperiment(db: Database, auth: AuthContext, id: string, variantKey: string) {
  const answer = await db.tenant(auth.tenantId, async (tx) => {
    const row = await existingExperimentInTx(tx, auth.tenantId, id, true);
    if (row.status !== 'running' && row.status !== 'stopped') {
      throw conflict(`the experiment “${row.name}” is ${row.status}: only a running or stopped experiment is rolled out`, 'EXPERIMENT_NOT_STARTED');
    }
    const winner = row.variants.find((v) => v.key === variantKey);
    if (!winner) {
      throw invalid(`the experiment has no variant "${variantKey}"`, 'EXPERIMENT_VARIANT_UNKNOWN', {
        errors: [fieldError('/variant', 'enum', `must be one of the experiment's variants`, { allowed: row.variants.map((v) => v.key) })],
      });
    }
    const publication = await publishWinner(tx, auth, row, winner.subject_id, row.name);
    const stopped: Array<{ variant: string; subject_id: string; action: StopAction }> = [];
    for (const variant of row.variants) {
      if (variant.key === winner.key) continue;
      stopped.push({ variant: variant.key, subject_id: variant.subject_id, action: await stopSubject(tx, auth.tenantId, row, variant.subject_id) });
    }
    const now = clock.now(auth.tenantId);
    const ended = await store.moveExperiment(tx, auth.tenantId, id, { status: 'ended', endedAt: now, rolledOutVariant: winner.key }, now);
    return { experiment: present(ended), variant: winner.key, subject_id: winner.subject_id, ...publication, stopped };
  });
  forgetRunning(auth.tenantId);
  return answer;
}
