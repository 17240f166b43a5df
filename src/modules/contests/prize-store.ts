import type { Tx } from '../../platform/db.js';

/**
 * The statements on prize allocations: recording them, issuing the codes of
 * verified ones, changing their status, and the published winners.
 */

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
