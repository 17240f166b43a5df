import type { Tx } from '../../platform/db.js';
import type { ReviewKind } from './schemas.js';

/** Every SQL statement on publication_reviews. */
export interface ReviewRow {
  id: string;
  kind: ReviewKind;
  item_id: string;
  item_name: string;
  item_revision: string;
  status: 'pending' | 'approved' | 'returned' | 'published';
  note: string | null;
  submitted_by_type: 'user' | 'api_key';
  submitted_by_id: string;
  submitted_by_email: string | null;
  submitted_at: Date;
  decided_by_type: 'user' | 'api_key' | null;
  decided_by_id: string | null;
  decided_by_email: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  backtest: unknown;
}

export interface Actor {
  type: 'user' | 'api_key';
  id: string;
  email: string | null;
}

const COLUMNS = `id, kind, item_id, item_name, item_revision, status, note, submitted_by_type, submitted_by_id, submitted_by_email, submitted_at,
  decided_by_type, decided_by_id, decided_by_email, decided_at, decision_note, backtest`;

/** Inserts a pending request; null when the item already has one (the partial unique index). */
export async function insertReview(
  tx: Tx,
  tenantId: string,
  review: { id: string; kind: ReviewKind; itemId: string; itemName: string; itemRevision: string; note: string | null; by: Actor; at: Date; backtest: unknown },
): Promise<ReviewRow | null> {
  const { rows } = await tx.query<ReviewRow>(
    `INSERT INTO publication_reviews (tenant_id, id, kind, item_id, item_name, item_revision, note, submitted_by_type, submitted_by_id, submitted_by_email, submitted_at, backtest)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::timestamptz, $12::jsonb)
     ON CONFLICT (tenant_id, kind, item_id) WHERE status = 'pending' DO NOTHING
     RETURNING ${COLUMNS}`,
    [tenantId, review.id, review.kind, review.itemId, review.itemName, review.itemRevision, review.note, review.by.type, review.by.id, review.by.email, review.at, review.backtest === null ? null : JSON.stringify(review.backtest)],
  );
  return rows[0] ?? null;
}

export async function findReview(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<ReviewRow | null> {
  const { rows } = await tx.query<ReviewRow>(`SELECT ${COLUMNS} FROM publication_reviews WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function listReviews(
  tx: Tx,
  tenantId: string,
  filter: { status?: string; kind?: string; itemId?: string },
  after: { submitted_at: string; id: string } | null,
  limit: number,
): Promise<ReviewRow[]> {
  const { rows } = await tx.query<ReviewRow>(
    `SELECT ${COLUMNS} FROM publication_reviews
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR kind = $3) AND ($4::text IS NULL OR item_id = $4)
       AND ($5::timestamptz IS NULL OR (submitted_at, id) < ($5::timestamptz, $6::text))
     ORDER BY submitted_at DESC, id DESC
     LIMIT $7::integer`,
    [tenantId, filter.status ?? null, filter.kind ?? null, filter.itemId ?? null, after?.submitted_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/** The pending request of an item, locked; null when it has none. */
export async function findPendingReviewOf(tx: Tx, tenantId: string, kind: ReviewKind, itemId: string): Promise<ReviewRow | null> {
  const { rows } = await tx.query<ReviewRow>(
    `SELECT ${COLUMNS} FROM publication_reviews WHERE tenant_id = $1 AND kind = $2 AND item_id = $3 AND status = 'pending' FOR UPDATE`,
    [tenantId, kind, itemId],
  );
  return rows[0] ?? null;
}

/** Records a publisher's decision on a pending request; null when it was no longer pending. */
export async function decideReview(
  tx: Tx,
  tenantId: string,
  id: string,
  decision: { status: 'approved' | 'returned' | 'published'; by: Actor; at: Date; note: string | null },
): Promise<ReviewRow | null> {
  const { rows } = await tx.query<ReviewRow>(
    `UPDATE publication_reviews
     SET status = $3, decided_by_type = $4, decided_by_id = $5, decided_by_email = $6, decided_at = $7::timestamptz, decision_note = $8
     WHERE tenant_id = $1 AND id = $2 AND status = 'pending'
     RETURNING ${COLUMNS}`,
    [tenantId, id, decision.status, decision.by.type, decision.by.id, decision.by.email, decision.at, decision.note],
  );
  return rows[0] ?? null;
}
