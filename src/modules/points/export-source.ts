import type { ExportSource } from '../../platform/export-sources.js';

const LEDGER_COLUMNS = ['id', 'participant_id', 'type', 'amount', 'reason', 'memo', 'source_kind', 'source_id', 'activity_id', 'engagement_id', 'available_after', 'lifetime_after', 'created_at'];

/** The ledger export: entries in time order. */
export const ledgerExport: ExportSource = {
  async columns() {
    return LEDGER_COLUMNS;
  },
  async page(tx, tenantId, { filters, cursor, limit }) {
    const after = cursor as { created_at: string; seq: number } | null;
    const { rows } = await tx.query(
      `SELECT id, participant_id, type, delta AS amount, reason, memo, source_kind, source_id, activity_id, engagement_id,
              available_after, lifetime_after, created_at, to_json(created_at) #>> '{}' AS cursor_at, seq
       FROM points_ledger
       WHERE tenant_id = $1
         AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
         AND ($4::timestamptz IS NULL OR (created_at, seq) > ($4::timestamptz, $5::bigint))
       ORDER BY created_at, seq LIMIT $6`,
      [tenantId, filters.from, filters.to, after?.created_at ?? null, after?.seq ?? null, limit],
    );
    const last = rows.at(-1);
    return {
      records: rows.map(({ cursor_at: _c, seq: _s, created_at, ...rest }) => ({ ...rest, created_at: (created_at as Date).toISOString() })),
      cursor: rows.length === limit && last ? { created_at: last.cursor_at, seq: Number(last.seq) } : null,
    };
  },
};

