import type { Tx } from '../../platform/db.js';
import type { EntryRow } from './contest-store.js';

/**
 * The statements on entries: entering, reading, the shared-signal counts, the
 * live rank, status changes with their history, and the leaderboards.
 */

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
