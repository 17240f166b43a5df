import { batchState, mayMatchInBatch, onBatchEnd } from '../../platform/batch.js';
import type { Tx } from '../../platform/db.js';
import type { Fact } from '../../platform/facts.js';
import { clock } from '../../platform/clock.js';
import { emit, reserveEmit, type OutboxEvent, type OutboxSlot } from '../../platform/outbox.js';
import * as store from './store.js';
import type { FraudRules } from './schemas.js';

/**
 * Real-time scoring: the fact handler that adds a fact's score to the entries
 * of the running contests it matches, and the velocity caps checked as it does.
 */

/** The velocity event's history covers five minutes; at most this many score events are listed. */
export const VELOCITY_HISTORY_MAX = 200;

/**
 * The fact handler: adds `score_attribute × weight` to the participant's entry
 * in every running contest whose `scoring.event_type` is the fact's name, once
 * per (contest, fact), then applies the velocity caps. Inside a processing
 * batch the facts are held and scored together when the batch ends, with the
 * same outcome as one by one (see scoreFactsInTx); each fact's breach events
 * keep its place among the batch's events.
 */
export async function scoreFactInTx(tx: Tx, tenantId: string, fact: Fact): Promise<void> {
  if (!(await mayMatchInBatch(tx, store.scoredEventTypes, tenantId, fact.name))) return;
  const held = batchState(tx, `contests:held-facts:${tenantId}`, () => {
    const state = { facts: [] as Fact[], slots: [] as Array<OutboxSlot | null> };
    onBatchEnd(tx, () => scoreFactsInTx(tx, tenantId, state.facts.splice(0), state.slots.splice(0)));
    return state;
  });
  if (!held) return scoreFactsInTx(tx, tenantId, [fact], [null]);
  held.facts.push(fact);
  held.slots.push(reserveEmit(tx, tenantId));
}

type Cap = { cap: 'per_minute' | 'per_hour'; limit: number | undefined; value: number };

/**
 * Scores facts in their order with two statements whatever their number: one
 * reads what each fact may score with the entry's recent score before these
 * facts, one records the scores. The velocity caps are checked per fact in
 * between, in order, counting the earlier facts of the call as scored, so a
 * breach is reported at the fact that carries the score over a cap (one event
 * per crossing), and an entry a breach disqualifies scores none of the later
 * facts, exactly as when each fact is scored on its own. `slots[i]` is where
 * fact i's breach events go among held emits (null: emitted at once).
 */
async function scoreFactsInTx(tx: Tx, tenantId: string, facts: Fact[], slots: Array<OutboxSlot | null>): Promise<void> {
  if (facts.length === 0) return;
  const matches = await store.matchFacts(tx, tenantId, facts);
  const entries = new Map<string, { scored: store.FactMatch[]; disqualified: boolean }>();
  const scored: store.FactMatch[] = [];
  const breaches: Array<{ match: store.FactMatch; crossed: Cap[]; disqualify: boolean }> = [];
  for (const match of matches) {
    const key = `${match.contest_id}\n${match.participant_id}`;
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = { scored: [], disqualified: false }));
    if (entry.disqualified || entry.scored.some((s) => s.fact_id === match.fact_id)) continue;
    entry.scored.push(match);
    scored.push(match);
    const rules = match.fraud_rules as FraudRules;
    if (rules.max_score_per_minute === undefined && rules.max_score_per_hour === undefined) continue;
    const at = new Date(match.occurred_at).getTime();
    const scoredWithin = (ms: number) =>
      entry.scored.reduce((sum, s) => {
        const t = new Date(s.occurred_at).getTime();
        return t > at - ms && t <= at ? sum + s.delta : sum;
      }, 0);
    const caps: Cap[] = [
      { cap: 'per_minute', limit: rules.max_score_per_minute, value: match.prior_minute + scoredWithin(60_000) },
      { cap: 'per_hour', limit: rules.max_score_per_hour, value: match.prior_hour + scoredWithin(3_600_000) },
    ];
    // A breach is reported when this fact carries the score over the cap, so one crossing yields one event.
    const crossed = caps.filter((c) => c.limit !== undefined && c.value > c.limit && c.value - match.delta <= c.limit);
    if (crossed.length === 0) continue;
    const disqualify = rules.auto_disqualify_on_velocity_breach === true;
    breaches.push({ match, crossed, disqualify });
    if (disqualify) entry.disqualified = true;
  }
  const now = clock.now(tenantId);
  await store.recordScores(tx, tenantId, scored, now);

  const breachEvents = new Map<number, OutboxEvent[]>();
  for (const { match, crossed, disqualify } of breaches) {
    const later = entries.get(`${match.contest_id}\n${match.participant_id}`)!.scored.filter((s) => s.ordinal > match.ordinal).map((s) => s.fact_id);
    const history = (await store.velocityHistory(tx, tenantId, match.contest_id, match.participant_id, match.occurred_at, VELOCITY_HISTORY_MAX, later)).map((h) => ({
      at: new Date(h.at).toISOString(),
      score: Number(h.score),
    }));
    const events = breachEvents.get(match.ordinal) ?? [];
    breachEvents.set(match.ordinal, events);
    events.push(
      ...crossed.map((b) => ({
        event: 'fraud.velocity_breach',
        participantId: match.participant_id,
        data: {
          participant_id: match.participant_id,
          contest_id: match.contest_id,
          entry_id: match.entry_id,
          cap: b.cap,
          limit: b.limit,
          observed: b.value,
          history,
          action: disqualify ? 'disqualified' : 'flagged',
        },
      })),
    );
    const reason = `velocity_breach:${crossed.map((b) => b.cap).join(',')}`;
    await store.setEntryStatus(
      tx,
      tenantId,
      [{ contestId: match.contest_id, participantId: match.participant_id, to: disqualify ? 'disqualified' : 'flagged', reason }],
      'fraud',
      now,
      disqualify ? ['active', 'flagged'] : ['active'],
    );
  }
  for (const [i, slot] of slots.entries()) {
    const events = breachEvents.get(i + 1) ?? [];
    if (slot) slot.fill(events, clock.now());
    else if (events.length > 0) await emit(tx, tenantId, events);
  }
}
