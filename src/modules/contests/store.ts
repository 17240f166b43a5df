import type { Tx } from '../../platform/db.js';

/** The largest score one fact may add; larger values are ignored as implausible (and would overflow). */
export const SCORE_DELTA_MAX = 1_000_000_000_000;

/**
 * Every SQL statement on the contest tables. Each function takes the
 * transaction and the tenant first and filters by the tenant.
 */
export interface ContestRow {
  tenant_id: string;
  id: string;
  title: string;
  description: string | null;
  status: 'draft' | 'scheduled' | 'active' | 'scoring' | 'completed';
  starts_at: Date;
  ends_at: Date;
  event_type: string;
  score_attribute: string;
  weight: number;
  prize_structure: PrizeTierDefinition[];
  max_reward_liability: number;
  fraud_rules: Record<string, unknown>;
  verification_window_hours: number;
  entry_count: number;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  activated_at: Date | null;
  scoring_started_at: Date | null;
  completed_at: Date | null;
  final_sweep_ms: number | null;
  verification_ends_at: Date | null;
  prizes_issued_at: Date | null;
  liability_allocated: number;
  tie_break: Record<string, unknown> | null;
}

export interface PrizeTierDefinition {
  rank_from: number;
  rank_to: number;
  label?: string;
  reward: { type: string; value: number; name?: string };
}

export interface EntryRow {
  tenant_id: string;
  contest_id: string;
  participant_id: string;
  entry_id: string;
  display_name: string | null;
  entered_at: Date;
  status: string;
  score: number;
  score_events: number;
  reached_at: Date;
  last_scored_at: Date | null;
  final_rank: number | null;
  email: string | null;
  payment_method: string | null;
  device_fingerprint: string | null;
  publish_consent: boolean;
}

export interface NewContest {
  id: string;
  title: string;
  description: string | null;
  startsAt: Date;
  endsAt: Date;
  eventType: string;
  scoreAttribute: string;
  weight: number;
  prizeStructure: PrizeTierDefinition[];
  maxRewardLiability: number;
  fraudRules: Record<string, unknown>;
  verificationWindowHours: number;
  now: Date;
}

export async function insertContest(tx: Tx, tenantId: string, c: NewContest): Promise<ContestRow | null> {
  const { rows } = await tx.query<ContestRow>(
    `INSERT INTO contests (tenant_id, id, title, description, starts_at, ends_at, event_type, score_attribute, weight,
                           prize_structure, max_reward_liability, fraud_rules, verification_window_hours, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12::jsonb, $13, $14, $14)
     ON CONFLICT (tenant_id, id) DO NOTHING
     RETURNING *`,
    [
      tenantId, c.id, c.title, c.description, c.startsAt, c.endsAt, c.eventType, c.scoreAttribute, c.weight,
      JSON.stringify(c.prizeStructure), c.maxRewardLiability, JSON.stringify(c.fraudRules), c.verificationWindowHours, c.now,
    ],
  );
  return rows[0] ?? null;
}

export async function readContest(tx: Tx, tenantId: string, id: string, lock = false): Promise<ContestRow | null> {
  const { rows } = await tx.query<ContestRow>(`SELECT * FROM contests WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

/** Column names that `updateContest` may set, mapped from the service's field names. */
const UPDATABLE_COLUMNS = {
  title: 'title',
  description: 'description',
  startsAt: 'starts_at',
  endsAt: 'ends_at',
  eventType: 'event_type',
  scoreAttribute: 'score_attribute',
  weight: 'weight',
  prizeStructure: 'prize_structure',
  maxRewardLiability: 'max_reward_liability',
  fraudRules: 'fraud_rules',
  verificationWindowHours: 'verification_window_hours',
  status: 'status',
  publishedAt: 'published_at',
  activatedAt: 'activated_at',
  scoringStartedAt: 'scoring_started_at',
  completedAt: 'completed_at',
  finalSweepMs: 'final_sweep_ms',
  verificationEndsAt: 'verification_ends_at',
  prizesIssuedAt: 'prizes_issued_at',
  liabilityAllocated: 'liability_allocated',
  tieBreak: 'tie_break',
} as const;
export type ContestUpdate = Partial<Record<keyof typeof UPDATABLE_COLUMNS, unknown>>;
const JSON_COLUMNS = new Set(['prize_structure', 'fraud_rules', 'tie_break']);

export async function updateContest(tx: Tx, tenantId: string, id: string, update: ContestUpdate, now: Date): Promise<ContestRow> {
  const sets: string[] = [];
  const values: unknown[] = [tenantId, id, now];
  for (const [field, value] of Object.entries(update)) {
    if (value === undefined) continue;
    const column = UPDATABLE_COLUMNS[field as keyof typeof UPDATABLE_COLUMNS];
    values.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}${JSON_COLUMNS.has(column) ? '::jsonb' : ''}`);
  }
  const { rows } = await tx.query<ContestRow>(
    `UPDATE contests SET ${[...sets, 'updated_at = $3'].join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    values,
  );
  return rows[0];
}

export async function listContests(
  tx: Tx,
  tenantId: string,
  filter: { status?: string; limit: number; after?: { created_at: string; id: string } | null },
): Promise<ContestRow[]> {
  const { rows } = await tx.query<ContestRow>(
    `SELECT * FROM contests
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
     ORDER BY created_at DESC, id DESC
     LIMIT $5`,
    [tenantId, filter.status ?? null, filter.after?.created_at ?? null, filter.after?.id ?? null, filter.limit],
  );
  return rows;
}

export async function listActiveContests(tx: Tx, tenantId: string, limit: number): Promise<ContestRow[]> {
  const { rows } = await tx.query<ContestRow>(
    `SELECT * FROM contests WHERE tenant_id = $1 AND status = 'active' ORDER BY ends_at, id LIMIT $2`,
    [tenantId, limit],
  );
  return rows;
}

// ---------------------------------------------------------------- entries

export interface NewEntry {
  contestId: string;
  participantId: string;
  entryId: string;
  displayName: string | null;
  email: string | null;
  paymentMethod: string | null;
  deviceFingerprint: string | null;
  publishConsent: boolean | null;
  now: Date;
  actor: string;
}

/**
 * Enters once: a repeat returns the existing entry (refreshing the signals the
 * caller supplied) and creates nothing. The entry count and the first status
 * history row are written in the same statement.
 */
export async function insertEntry(tx: Tx, tenantId: string, e: NewEntry): Promise<{ entry: EntryRow; created: boolean }> {
  const { rows } = await tx.query<EntryRow & { created: boolean }>(
    `WITH inserted AS (
       INSERT INTO contest_entries (tenant_id, contest_id, participant_id, entry_id, display_name, entered_at, reached_at,
                                    email, payment_method, device_fingerprint, publish_consent)
       VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, coalesce($10, false))
       ON CONFLICT (tenant_id, contest_id, participant_id) DO NOTHING
       RETURNING *
     ),
     counted AS (
       UPDATE contests SET entry_count = entry_count + 1
       WHERE tenant_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM inserted)
       RETURNING 1
     ),
     history AS (
       INSERT INTO contest_entry_status_history (tenant_id, contest_id, participant_id, from_status, to_status, reason, actor, changed_at)
       SELECT $1, $2, $3, NULL, 'active', 'entered', $11, $6 FROM inserted
       RETURNING 1
     ),
     refreshed AS (
       UPDATE contest_entries SET
         display_name = coalesce($5, display_name),
         email = coalesce($7, email),
         payment_method = coalesce($8, payment_method),
         device_fingerprint = coalesce($9, device_fingerprint),
         publish_consent = coalesce($10, publish_consent)
       WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3 AND NOT EXISTS (SELECT 1 FROM inserted)
       RETURNING *
     )
     SELECT *, true AS created FROM inserted
     UNION ALL
     SELECT *, false AS created FROM refreshed`,
    [tenantId, e.contestId, e.participantId, e.entryId, e.displayName, e.now, e.email, e.paymentMethod, e.deviceFingerprint, e.publishConsent, e.actor],
  );
  const { created, ...entry } = rows[0];
  return { entry, created };
}

export async function readEntry(tx: Tx, tenantId: string, contestId: string, participantId: string): Promise<EntryRow | null> {
  const { rows } = await tx.query<EntryRow>('SELECT * FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3', [
    tenantId,
    contestId,
    participantId,
  ]);
  return rows[0] ?? null;
}

export async function readEntryById(tx: Tx, tenantId: string, entryId: string): Promise<EntryRow | null> {
  const { rows } = await tx.query<EntryRow>('SELECT * FROM contest_entries WHERE tenant_id = $1 AND entry_id = $2', [tenantId, entryId]);
  return rows[0] ?? null;
}

/** Other entries of the contest that share a signal value (repeat devices and payment methods). */
export async function countSharedSignal(
  tx: Tx,
  tenantId: string,
  contestId: string,
  participantId: string,
  column: 'device_fingerprint' | 'payment_method',
  value: string,
): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM contest_entries
     WHERE tenant_id = $1 AND contest_id = $2 AND ${column} = $3 AND participant_id <> $4`,
    [tenantId, contestId, value, participantId],
  );
  return rows[0].n;
}

/** The live rank: one plus the ranked entries ahead in the leaderboard order (an index range scan). */
export async function liveRank(tx: Tx, tenantId: string, entry: EntryRow): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM contest_entries
     WHERE tenant_id = $1 AND contest_id = $2 AND status <> 'disqualified'
       AND (score > $3 OR (score = $3 AND (reached_at, entry_id) < ($4, $5)))`,
    [tenantId, entry.contest_id, entry.score, entry.reached_at, entry.entry_id],
  );
  return rows[0].n + 1;
}

export async function setEntryStatus(
  tx: Tx,
  tenantId: string,
  changes: Array<{ contestId: string; participantId: string; to: string; reason: string }>,
  actor: string,
  now: Date,
  onlyFrom: string[] | null = null,
): Promise<Array<{ contest_id: string; participant_id: string; entry_id: string; from_status: string; to_status: string }>> {
  if (changes.length === 0) return [];
  const { rows } = await tx.query(
    `WITH wanted AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS w (contest_id, participant_id, to_status, reason)
     ),
     old AS (
       SELECT e.contest_id, e.participant_id, e.status FROM contest_entries e
       JOIN wanted w ON w.contest_id = e.contest_id AND w.participant_id = e.participant_id
       WHERE e.tenant_id = $1 AND e.status <> w.to_status AND ($7::text[] IS NULL OR e.status = ANY($7))
       FOR UPDATE OF e
     ),
     changed AS (
       UPDATE contest_entries e SET status = w.to_status
       FROM wanted w, old o
       WHERE e.tenant_id = $1 AND e.contest_id = w.contest_id AND e.participant_id = w.participant_id
         AND o.contest_id = e.contest_id AND o.participant_id = e.participant_id
       RETURNING e.contest_id, e.participant_id, e.entry_id, o.status AS from_status, e.status AS to_status, w.reason
     ),
     history AS (
       INSERT INTO contest_entry_status_history (tenant_id, contest_id, participant_id, from_status, to_status, reason, actor, changed_at)
       SELECT $1, contest_id, participant_id, from_status, to_status, reason, $6, $8 FROM changed
     )
     SELECT contest_id, participant_id, entry_id, from_status, to_status FROM changed`,
    [
      tenantId,
      changes.map((c) => c.contestId),
      changes.map((c) => c.participantId),
      changes.map((c) => c.to),
      changes.map((c) => c.reason),
      actor,
      onlyFrom,
      now,
    ],
  );
  return rows;
}

export async function statusHistory(tx: Tx, tenantId: string, contestId: string, participantId: string, limit: number) {
  const { rows } = await tx.query(
    `SELECT from_status, to_status, reason, actor, changed_at FROM contest_entry_status_history
     WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3 ORDER BY seq LIMIT $4`,
    [tenantId, contestId, participantId, limit],
  );
  return rows as Array<{ from_status: string | null; to_status: string; reason: string; actor: string; changed_at: Date }>;
}

export async function entriesOfParticipant(tx: Tx, tenantId: string, participantId: string, limit: number) {
  const { rows } = await tx.query<EntryRow & { rank: number | null }>(
    `SELECT e.*, s.rank FROM contest_entries e
     LEFT JOIN contest_rank_snapshots s ON s.tenant_id = e.tenant_id AND s.contest_id = e.contest_id AND s.participant_id = e.participant_id
     WHERE e.tenant_id = $1 AND e.participant_id = $2 ORDER BY e.entered_at DESC LIMIT $3`,
    [tenantId, participantId, limit],
  );
  return rows;
}

// ---------------------------------------------------------------- leaderboards

export interface RankedRow {
  rank: number;
  participant_id: string;
  entry_id: string;
  display_name: string | null;
  score: number;
  reached_at: Date;
  last_scored_at: Date | null;
  status: string;
}

/** The live order: score, then earliest to reach it; a walk of the leaderboard index from the top. */
export async function liveLeaderboard(tx: Tx, tenantId: string, contestId: string, limit: number, offset: number): Promise<RankedRow[]> {
  const { rows } = await tx.query<RankedRow>(
    `SELECT (row_number() OVER (ORDER BY score DESC, reached_at, entry_id) + $4)::int AS rank,
            participant_id, entry_id, display_name, score, reached_at, last_scored_at, status
     FROM (
       SELECT * FROM contest_entries
       WHERE tenant_id = $1 AND contest_id = $2 AND status <> 'disqualified'
       ORDER BY score DESC, reached_at, entry_id
       LIMIT $3 OFFSET $4
     ) page
     ORDER BY score DESC, reached_at, entry_id`,
    [tenantId, contestId, limit, offset],
  );
  return rows;
}

export async function finalLeaderboard(tx: Tx, tenantId: string, contestId: string, limit: number, offset: number): Promise<RankedRow[]> {
  const { rows } = await tx.query<RankedRow>(
    `SELECT final_rank AS rank, participant_id, entry_id, display_name, score, reached_at, last_scored_at, status
     FROM contest_entries
     WHERE tenant_id = $1 AND contest_id = $2 AND final_rank IS NOT NULL
     ORDER BY final_rank
     LIMIT $3 OFFSET $4`,
    [tenantId, contestId, limit, offset],
  );
  return rows;
}

export async function rankedCount(tx: Tx, tenantId: string, contestId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2 AND status <> 'disqualified'`,
    [tenantId, contestId],
  );
  return rows[0].n;
}

// ---------------------------------------------------------------- scoring

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

/** The fact names the tenant's running contests score (a superset of those whose window holds a given time). */
export async function scoredEventTypes(tx: Tx, tenantId: string): Promise<string[]> {
  const { rows } = await tx.query<{ event_type: string }>(
    "SELECT DISTINCT event_type FROM contests WHERE tenant_id = $1 AND status IN ('active', 'scoring')",
    [tenantId],
  );
  return rows.map((r) => r.event_type);
}

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

// ---------------------------------------------------------------- lifecycle

/**
 * Recomputes every entry's live rank and returns the entries whose climb since
 * the start of their rank window exceeds the cap. The window restarts once it
 * is an hour old, from the rank the entry had at the previous tick.
 */
export async function tickRanks(tx: Tx, tenantId: string, contestId: string, now: Date, rankJumpCap: number | null) {
  const { rows } = await tx.query<{ participant_id: string; entry_id: string; from_rank: number; to_rank: number; window_at: Date }>(
    `WITH ranked AS (
       SELECT participant_id, entry_id, row_number() OVER (ORDER BY score DESC, reached_at, entry_id)::int AS new_rank
       FROM contest_entries
       WHERE tenant_id = $1 AND contest_id = $2 AND status <> 'disqualified'
     ),
     calc AS (
       SELECT r.participant_id, r.entry_id, r.new_rank, s.rank, s.window_rank, s.window_at, s.jump_flagged_at,
              (s.window_at IS NULL OR s.window_at <= $3::timestamptz - interval '1 hour') AS restart
       FROM ranked r
       LEFT JOIN contest_rank_snapshots s ON s.tenant_id = $1 AND s.contest_id = $2 AND s.participant_id = r.participant_id
     ),
     next AS (
       SELECT participant_id, entry_id, rank, new_rank, restart,
              CASE WHEN restart THEN coalesce(rank, new_rank) ELSE window_rank END AS window_rank,
              CASE WHEN restart THEN $3::timestamptz ELSE window_at END AS window_at,
              CASE WHEN restart THEN NULL ELSE jump_flagged_at END AS flagged_at
       FROM calc
     ),
     judged AS (
       SELECT *, ($4::numeric IS NOT NULL AND flagged_at IS NULL AND window_rank - new_rank > $4::numeric) AS jumped FROM next
     ),
     written AS (
       INSERT INTO contest_rank_snapshots (tenant_id, contest_id, participant_id, rank, window_rank, window_at, jump_flagged_at, ticked_at)
       SELECT $1, $2, participant_id, new_rank, window_rank, window_at, CASE WHEN jumped THEN $3::timestamptz ELSE flagged_at END, $3
       FROM judged
       WHERE rank IS DISTINCT FROM new_rank OR restart OR jumped
       ON CONFLICT (tenant_id, contest_id, participant_id) DO UPDATE SET
         rank = EXCLUDED.rank, window_rank = EXCLUDED.window_rank, window_at = EXCLUDED.window_at,
         jump_flagged_at = EXCLUDED.jump_flagged_at, ticked_at = EXCLUDED.ticked_at
       RETURNING 1
     )
     SELECT participant_id, entry_id, window_rank AS from_rank, new_rank AS to_rank, window_at FROM judged WHERE jumped`,
    [tenantId, contestId, now, rankJumpCap],
  );
  return rows;
}

/**
 * The final sweep: freezes the final ranks in one statement. Order: score, then
 * earliest to reach it, then lifetime score, then a draw seeded per contest
 * (md5 of the seed and the entry id), so the same seed always gives the same order.
 * Entries ranked below the last prize rank become `finished` in the same pass:
 * one write per entry, and no status-history row each (the contest's
 * completed_at records that move for all of them at once).
 */
export async function freezeFinalRanks(tx: Tx, tenantId: string, contestId: string, seed: string, lifetime: Map<string, number>, lastPrizeRank: number) {
  const participants = [...lifetime.keys()];
  await tx.query(
    `WITH lifetime AS (
       SELECT * FROM unnest($4::text[], $5::bigint[]) AS l (participant_id, lifetime)
     ),
     ranked AS (
       SELECT e.participant_id,
              row_number() OVER (ORDER BY e.score DESC, e.reached_at, coalesce(l.lifetime, 0) DESC, md5($3 || e.entry_id), e.entry_id)::int AS final_rank
       FROM contest_entries e LEFT JOIN lifetime l ON l.participant_id = e.participant_id
       WHERE e.tenant_id = $1 AND e.contest_id = $2 AND e.status <> 'disqualified'
     )
     UPDATE contest_entries e
     SET final_rank = r.final_rank,
         status = CASE WHEN r.final_rank > $6 AND e.status IN ('active', 'flagged') THEN 'finished' ELSE e.status END
     FROM ranked r
     WHERE e.tenant_id = $1 AND e.contest_id = $2 AND e.participant_id = r.participant_id`,
    [tenantId, contestId, seed, participants, participants.map((p) => lifetime.get(p) ?? 0), lastPrizeRank],
  );
}

/** Entries that share score and reach time with another entry: the groups the later tie-breakers decide. */
export async function tiedGroups(tx: Tx, tenantId: string, contestId: string, groupsMax: number) {
  const { rows } = await tx.query<{ score: number; reached_at: Date; participants: string[]; entry_ids: string[] }>(
    `SELECT score, reached_at, array_agg(participant_id ORDER BY entry_id) AS participants, array_agg(entry_id ORDER BY entry_id) AS entry_ids
     FROM contest_entries
     WHERE tenant_id = $1 AND contest_id = $2 AND status <> 'disqualified'
     GROUP BY score, reached_at
     HAVING count(*) > 1
     ORDER BY score DESC, reached_at
     LIMIT $3`,
    [tenantId, contestId, groupsMax],
  );
  return rows;
}

export async function finalRanksOf(tx: Tx, tenantId: string, contestId: string, participantIds: string[]) {
  const { rows } = await tx.query<{ participant_id: string; final_rank: number }>(
    `SELECT participant_id, final_rank FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = ANY($3::text[]) ORDER BY final_rank`,
    [tenantId, contestId, participantIds],
  );
  return rows;
}

export async function entriesUpToRank(tx: Tx, tenantId: string, contestId: string, rankMax: number): Promise<EntryRow[]> {
  const { rows } = await tx.query<EntryRow>(
    `SELECT * FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2 AND final_rank IS NOT NULL AND final_rank <= $3 ORDER BY final_rank`,
    [tenantId, contestId, rankMax],
  );
  return rows;
}

export interface AllocationRow {
  participant_id: string;
  entry_id: string;
  rank: number;
  reward_type: string;
  reward_value: number;
  reward_name: string;
  status: string;
  prize_code: string | null;
  issued_at: Date | null;
}

export async function insertAllocations(tx: Tx, tenantId: string, contestId: string, allocations: AllocationRow[], now: Date) {
  if (allocations.length === 0) return;
  await tx.query(
    `INSERT INTO contest_prize_allocations (tenant_id, contest_id, participant_id, entry_id, rank, reward_type, reward_value, reward_name, status, allocated_at)
     SELECT $1, $2, a.participant_id, a.entry_id, a.rank, a.reward_type, a.reward_value, a.reward_name, a.status, $9
     FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::numeric[], $8::text[], $10::text[])
       AS a (participant_id, entry_id, rank, reward_type, reward_value, reward_name, status)`,
    [
      tenantId,
      contestId,
      allocations.map((a) => a.participant_id),
      allocations.map((a) => a.entry_id),
      allocations.map((a) => a.rank),
      allocations.map((a) => a.reward_type),
      allocations.map((a) => a.reward_value),
      allocations.map((a) => a.reward_name),
      now,
      allocations.map((a) => a.status),
    ],
  );
}

export async function insertReviews(
  tx: Tx,
  tenantId: string,
  reviews: Array<{ id: string; contestId: string; participantId: string; entryId: string; reasons: string[] }>,
  now: Date,
) {
  if (reviews.length === 0) return;
  await tx.query(
    `INSERT INTO contest_reviews (tenant_id, id, contest_id, participant_id, entry_id, reasons, created_at)
     SELECT $1, r.id, r.contest_id, r.participant_id, r.entry_id, string_to_array(r.reasons, ','), $7
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS r (id, contest_id, participant_id, entry_id, reasons)`,
    [
      tenantId,
      reviews.map((r) => r.id),
      reviews.map((r) => r.contestId),
      reviews.map((r) => r.participantId),
      reviews.map((r) => r.entryId),
      reviews.map((r) => r.reasons.join(',')),
      now,
    ],
  );
}

/**
 * Issues the prize codes of verified allocations: pending ones whose entry is
 * not held. The guarded UPDATE returns each allocation once, so each winner
 * gets exactly one prize event even when two workers race.
 */
export async function issuePrizes(tx: Tx, tenantId: string, contestId: string, participantIds: string[] | null, codes: (n: number) => string[], now: Date) {
  const { rows: pending } = await tx.query<{ participant_id: string }>(
    `SELECT participant_id FROM contest_prize_allocations
     WHERE tenant_id = $1 AND contest_id = $2 AND status = 'pending_verification'
       AND ($3::text[] IS NULL OR participant_id = ANY($3::text[]))
     ORDER BY rank FOR UPDATE`,
    [tenantId, contestId, participantIds],
  );
  if (pending.length === 0) return [] as AllocationRow[];
  const generated = codes(pending.length);
  const { rows } = await tx.query<AllocationRow>(
    `UPDATE contest_prize_allocations a SET status = 'issued', prize_code = c.code, issued_at = $5
     FROM unnest($3::text[], $4::text[]) AS c (participant_id, code)
     WHERE a.tenant_id = $1 AND a.contest_id = $2 AND a.participant_id = c.participant_id AND a.status = 'pending_verification'
     RETURNING a.participant_id, a.entry_id, a.rank, a.reward_type, a.reward_value, a.reward_name, a.status, a.prize_code, a.issued_at`,
    [tenantId, contestId, pending.map((p) => p.participant_id), generated, now],
  );
  return rows.sort((a, b) => a.rank - b.rank);
}

export async function setAllocationStatus(tx: Tx, tenantId: string, contestId: string, participantId: string, from: string[], to: string) {
  const { rows } = await tx.query<AllocationRow>(
    `UPDATE contest_prize_allocations SET status = $5
     WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3 AND status = ANY($4::text[])
     RETURNING participant_id, entry_id, rank, reward_type, reward_value, reward_name, status, prize_code, issued_at`,
    [tenantId, contestId, participantId, from, to],
  );
  return rows[0] ?? null;
}

export async function readAllocation(tx: Tx, tenantId: string, contestId: string, participantId: string): Promise<AllocationRow | null> {
  const { rows } = await tx.query<AllocationRow>(
    `SELECT participant_id, entry_id, rank, reward_type, reward_value, reward_name, status, prize_code, issued_at
     FROM contest_prize_allocations WHERE tenant_id = $1 AND contest_id = $2 AND participant_id = $3`,
    [tenantId, contestId, participantId],
  );
  return rows[0] ?? null;
}

export async function issuedWinners(tx: Tx, tenantId: string, contestId: string, limit: number) {
  const { rows } = await tx.query<{ rank: number; display_name: string | null; publish_consent: boolean; reward_type: string; reward_name: string }>(
    `SELECT a.rank, e.display_name, e.publish_consent, a.reward_type, a.reward_name
     FROM contest_prize_allocations a
     JOIN contest_entries e ON e.tenant_id = a.tenant_id AND e.contest_id = a.contest_id AND e.participant_id = a.participant_id
     WHERE a.tenant_id = $1 AND a.contest_id = $2 AND a.status = 'issued'
     ORDER BY a.rank LIMIT $3`,
    [tenantId, contestId, limit],
  );
  return rows;
}

// ---------------------------------------------------------------- reviews

export interface ReviewRow {
  id: string;
  contest_id: string;
  participant_id: string;
  entry_id: string;
  reasons: string[];
  status: 'pending' | 'approved' | 'disqualified';
  created_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  note: string | null;
  score: number;
  final_rank: number | null;
}

const REVIEW_SELECT = `SELECT r.id, r.contest_id, r.participant_id, r.entry_id, r.reasons, r.status, r.created_at, r.decided_at, r.decided_by, r.note,
                              e.score, e.final_rank
                       FROM contest_reviews r
                       JOIN contest_entries e ON e.tenant_id = r.tenant_id AND e.contest_id = r.contest_id AND e.participant_id = r.participant_id`;

export async function listReviews(
  tx: Tx,
  tenantId: string,
  filter: { contestId?: string; status?: string; limit: number; after?: { created_at: string; id: string } | null },
): Promise<ReviewRow[]> {
  const { rows } = await tx.query<ReviewRow>(
    `${REVIEW_SELECT}
     WHERE r.tenant_id = $1 AND ($2::text IS NULL OR r.contest_id = $2) AND ($3::text IS NULL OR r.status = $3)
       AND ($4::timestamptz IS NULL OR (r.created_at, r.id) > ($4, $5))
     ORDER BY r.created_at, r.id
     LIMIT $6`,
    [tenantId, filter.contestId ?? null, filter.status ?? null, filter.after?.created_at ?? null, filter.after?.id ?? null, filter.limit],
  );
  return rows;
}

export async function findReview(tx: Tx, tenantId: string, by: { reviewId?: string; contestId?: string; entryId?: string }, lock: boolean): Promise<ReviewRow | null> {
  const { rows } = await tx.query<ReviewRow>(
    `${REVIEW_SELECT}
     WHERE r.tenant_id = $1 AND ($2::text IS NULL OR r.id = $2) AND ($3::text IS NULL OR r.contest_id = $3) AND ($4::text IS NULL OR r.entry_id = $4)
     ORDER BY (r.status = 'pending') DESC, r.created_at DESC
     LIMIT 1${lock ? ' FOR UPDATE OF r' : ''}`,
    [tenantId, by.reviewId ?? null, by.contestId ?? null, by.entryId ?? null],
  );
  return rows[0] ?? null;
}

export async function decideReview(tx: Tx, tenantId: string, id: string, status: 'approved' | 'disqualified', decidedBy: string, note: string | null, now: Date) {
  await tx.query(
    `UPDATE contest_reviews SET status = $3, decided_by = $4, note = $5, decided_at = $6 WHERE tenant_id = $1 AND id = $2 AND status = 'pending'`,
    [tenantId, id, status, decidedBy, note, now],
  );
}

// ---------------------------------------------------------------- due work (system pool)

/** Contests whose next lifecycle step is due, across tenants (the safety sweep). */
export const DUE_CONTESTS_SQL = `
  SELECT tenant_id, id FROM contests
  WHERE (status = 'scheduled' AND starts_at <= $1)
     OR (status = 'active')
     OR (status = 'scoring')
     OR (status = 'completed' AND prizes_issued_at IS NULL AND verification_ends_at <= $1)
  LIMIT $2`;

/** One tenant's contests with a due step at `now` (the tenant's clock), oldest deadline first. */
export async function dueContestsOfTenant(tx: Tx, tenantId: string, now: Date, limit: number) {
  const { rows } = await tx.query<{ id: string; status: ContestRow['status']; prizes_issued_at: Date | null }>(
    `SELECT id, status, prizes_issued_at FROM contests
     WHERE tenant_id = $1
       AND ((status = 'scheduled' AND starts_at <= $2)
         OR (status = 'active' AND ends_at <= $2)
         OR (status = 'scoring')
         OR (status = 'completed' AND prizes_issued_at IS NULL AND verification_ends_at <= $2))
     ORDER BY ends_at, id
     LIMIT $3`,
    [tenantId, now, limit],
  );
  return rows;
}
