import type { Tx } from '../../platform/db.js';
import { batchCached } from '../../platform/batch.js';
import { experimentVariantInTx, runningExperimentSubjectsInTx } from '../../platform/experiments.js';
import * as store from './store.js';

/**
 * Earn rules in experiments (issue 36). While an experiment runs, each of its
 * rules applies only to the participants assigned to its variant (the holdout
 * gets none of them), and a draft rule among them serves its variant's
 * participants although it is not published. The experiments module decides
 * (platform/experiments.ts); this file is all the engine asks of it.
 */

/** The rules an event is considered for: the active ones, and the drafts that are variants of running experiments, highest priority first. */
export async function eventRulesWithVariants(tx: Tx, tenantId: string, eventName: string): Promise<store.RuleRow[]> {
  const active = await store.eventRulesAnyTime(tx, tenantId, eventName);
  const subjects = await runningExperimentSubjectsInTx(tx, tenantId, 'rule');
  if (subjects.size === 0) return active;
  const ids = [...subjects].filter((id) => !active.some((rule) => rule.id === id)).sort();
  if (ids.length === 0) return active;
  const read = async () => {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM earn_rules WHERE tenant_id = $1 AND status = 'draft' AND trigger = 'event' AND event_name = $2 AND id = ANY($3::text[])`,
      [tenantId, eventName, ids],
    );
    return (await Promise.all(rows.map((row) => store.findRule(tx, tenantId, row.id)))).filter((rule): rule is store.RuleRow => rule !== null);
  };
  const drafts = await (batchCached(tx, `rules:experiment-drafts:${tenantId}:${eventName}:${ids.join(',')}`, read) ?? read());
  if (drafts.length === 0) return active;
  return [...active, ...drafts].sort(
    (a, b) => b.priority - a.priority || a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** A rule's verdict (engine.ts RuleVerdict) when it serves another variant. */
export interface OtherVariantVerdict {
  rule_id: string;
  rule_name: string;
  result: 'other_variant';
  points: 0;
  experiment: { experiment_id: string; variant_key: string };
}

/**
 * The verdict of a rule that does not serve the participant because they are
 * assigned to another variant of its experiment (or the holdout); null when it
 * serves them (or is in no running experiment). Records the participant's
 * assignment at this first exposure.
 */
export async function otherVariantVerdict(tx: Tx, tenantId: string, rule: store.RuleRow, participantId: string): Promise<OtherVariantVerdict | null> {
  const answer = await experimentVariantInTx(tx, tenantId, 'rule', rule.id, participantId);
  if (!answer || answer.applies) return null;
  return {
    rule_id: rule.id,
    rule_name: rule.name,
    result: 'other_variant',
    points: 0,
    experiment: { experiment_id: answer.experimentId, variant_key: answer.variantKey },
  };
}

/** What an experiment needs to know of a rule: its name, status and trigger. */
export async function ruleForExperimentInTx(tx: Tx, tenantId: string, id: string) {
  const row = await store.findRule(tx, tenantId, id);
  return row ? { name: row.name, status: row.status, trigger: row.trigger, draft: row.status === 'draft' } : null;
}
