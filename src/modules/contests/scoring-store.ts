import type { Tx } from '../../platform/db.js';
import type { BatchQuestion } from '../../platform/batch.js';

/**
 * The statements of real-time scoring: which facts match which entries, the
 * recorded scores, and the velocity history of an entry.
 */

/** The largest score one fact may add; larger values are ignored as implausible (and would overflow). */
export const SCORE_DELTA_MAX = 1_000_000_000_000;

/**
 * A fact's match with a running contest of its name whose entry it may score:
 * the entry is the participant's, entered by the fact's time and not
 * disqualified, the attribute is a number giving a positive delta, and the
 * (contest, fact) pair is not yet recorded. With velocity caps on the
 * contest, `prior_minute` and `prior_hour` are the entry's score in the
 * minute and the hour up to the fact's time before this call's facts.
 */
export interface FactMatch {
  /** The fact's place among the facts given (1-based). */
  ordinal: number;
  fact_id: string;
  contest_id: string;
  participant_id: string;
  entry_id: string;
  occurred_at: Date;
  delta: number;
  fraud_rules: Record<string, unknown>;
  prior_minute: number;
  prior_hour: number;
}

export interface ScoringFact {
  id: string;
  name: string;
  participantId: string;
  properties: Record<string, unknown>;
  occurredAt: Date;
}

/** The fact names the tenant's running contests score (a superset of those whose window holds a given time): a batch question (platform/batch.ts). */
export const scoredEventTypes: BatchQuestion<ReadonlySet<string>> = {
  name: 'contests:scored-event-names',
  text: "SELECT DISTINCT event_type FROM contests WHERE tenant_id = $1 AND status IN ('active', 'scoring')",
  answer: (rows) => new Set(rows.map((r) => r.event_type as string)),
};

/**
 * Matches facts with the entries they may score (FactMatch), in the order of
 * the facts; reads only. It needs `contest_score_events` analyzed: before the
 * first ANALYZE the planner has no column statistics and may probe by contest
 * alone, reading the contest's whole score history per fact (2.3 s per 100
 * facts after 16,000 scored, 4 ms after ANALYZE). Autovacuum analyzes a
 * growing table within its naptime (a minute by default).
 */
export async function matchFacts(tx: Tx, tenantId: string, facts: ScoringFact[]): Promise<FactMatch[]> {
  const { rows } = await tx.query(
    `WITH f AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[]) WITH ORDINALITY
         AS f (id, name, participant_id, properties, occurred_at, ordinal)
     ), matched AS (
       SELECT f.ordinal, f.id AS fact_id, f.participant_id, f.occurred_at, c.id AS contest_id, c.fraud_rules,
              CASE WHEN jsonb_typeof(f.properties -> c.score_attribute) = 'number'
                   THEN ((f.properties ->> c.score_attribute)::numeric) * c.weight END AS raw
       FROM f
       JOIN contests c ON c.tenant_id = $1 AND c.event_type = f.name AND c.status IN ('active', 'scoring')
        AND c.starts_at <= f.occurred_at AND c.ends_at > f.occurred_at
     )
     SELECT m.ordinal::int, m.fact_id, m.contest_id, m.participant_id, e.entry_id, m.occurred_at, round(m.raw)::bigint AS delta, m.fraud_rules,
            coalesce(v.per_minute, 0)::bigint AS prior_minute, coalesce(v.per_hour, 0)::bigint AS prior_hour
     FROM matched m
     JOIN contest_entries e ON e.tenant_id = $1 AND e.contest_id = m.contest_id AND e.participant_id = m.participant_id
     LEFT JOIN LATERAL (
       SELECT sum(s.delta) FILTER (WHERE s.occurred_at > m.occurred_at - interval '1 minute') AS per_minute, sum(s.delta) AS per_hour
       FROM contest_score_events s
       WHERE (m.fraud_rules ? 'max_score_per_minute' OR m.fraud_rules ? 'max_score_per_hour')
         AND s.tenant_id = $1 AND s.contest_id = m.contest_id AND s.participant_id = m.participant_id
         AND s.occurred_at > m.occurred_at - interval '1 hour' AND s.occurred_at <= m.occurred_at
     ) v ON true
     WHERE m.raw BETWEEN 0 AND $7 AND round(m.raw) > 0 AND e.status <> 'disqualified' AND e.entered_at <= m.occurred_at
       AND NOT EXISTS (SELECT 1 FROM contest_score_events s WHERE s.tenant_id = $1 AND s.contest_id = m.contest_id AND s.fact_id = m.fact_id)
     ORDER BY m.ordinal, m.contest_id`,
    [
      tenantId,
      facts.map((f) => f.id),
      facts.map((f) => f.name),
      facts.map((f) => f.participantId),
      facts.map((f) => JSON.stringify(f.properties ?? {})),
      facts.map((f) => f.occurredAt),
      SCORE_DELTA_MAX,
    ],
  );
  return rows.map((r) => ({ ...r, delta: Number(r.delta), prior_minute: Number(r.prior_minute), prior_hour: Number(r.prior_hour) }) as FactMatch);
}

/**
 * Records the matches that score, the (contest, fact) pair being the
 * idempotency key, and adds each entry's deltas to its score, in one
 * statement. A pair recorded meanwhile scores nothing again.
 */
export async function recordScores(tx: Tx, tenantId: string, scores: FactMatch[], now: Date): Promise<void> {
  if (scores.length === 0) return;
  await tx.query(
    `WITH recorded AS (
       INSERT INTO contest_score_events (tenant_id, contest_id, fact_id, participant_id, delta, occurred_at, recorded_at)
       SELECT $1, s.contest_id, s.fact_id, s.participant_id, s.delta, s.occurred_at, $7
       FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[]) AS s (contest_id, fact_id, participant_id, delta, occurred_at)
       ON CONFLICT (tenant_id, contest_id, fact_id) DO NOTHING
       RETURNING contest_id, participant_id, delta, occurred_at
     ), totals AS (
       SELECT contest_id, participant_id, sum(delta) AS delta, count(*) AS n, max(occurred_at) AS latest
       FROM recorded GROUP BY contest_id, participant_id
     )
     UPDATE contest_entries e
     SET score = e.score + t.delta,
         score_events = e.score_events + t.n,
         reached_at = greatest(e.reached_at, t.latest),
         last_scored_at = greatest(coalesce(e.last_scored_at, t.latest), t.latest)
     FROM totals t
     WHERE e.tenant_id = $1 AND e.contest_id = t.contest_id AND e.participant_id = t.participant_id`,
    [
      tenantId,
      scores.map((s) => s.contest_id),
      scores.map((s) => s.fact_id),
      scores.map((s) => s.participant_id),
      scores.map((s) => s.delta),
      scores.map((s) => s.occurred_at),
      now,
    ],
  );
}

/** The entry's score events of the five minutes up to `at`, but for the facts `notYet` (scored later in the same batch): the history of a velocity breach. */
export async function velocityHistory(tx: Tx, tenantId: string, contestId: string, participantId: string, at: Date, limit: number, notYet: string[] = []) {
  const { rows } = await tx.query<{ at: Date; score: number }>(
    `SELECT occurred_at AS at, delta AS score FROM (
       SELECT occurred_at, delta FROM contest_score_events
       WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3
         AND occurred_at > $4::timestamptz - interval '5 minutes' AND occurred_at <= $4 AND fact_id <> ALL ($6::text[])
       ORDER BY occurred_at DESC LIMIT $5
     ) h ORDER BY occurred_at`,
    [tenantId, contestId, participantId, at, limit, notYet],
  );
  return rows;
}
