import type { Tx } from '../../platform/db.js';

/**
 * The statements on manual reviews: recording the held winners, listing,
 * finding and deciding reviews.
 */

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
