import type { Tx } from '../../platform/db.js';
import type { EntryRow } from './contest-store.js';

/**
 * The statements of the lifecycle: the rank ticks, and the final sweep that
 * freezes the final ranks with the tie-breakers.
 */

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
