import type { ExportSource } from '../../platform/export-sources.js';

const DELIVERY_COLUMNS = [
  'id',
  'destination_id',
  'event_id',
  'event',
  'participant_id',
  'status',
  'attempts',
  'last_response_status',
  'last_error',
  'replay_of',
  'created_at',
  'completed_at',
];

/** The webhook deliveries export: deliveries in creation order. */
export const webhookDeliveriesExport: ExportSource = {
  async columns() {
    return DELIVERY_COLUMNS;
  },
  async page(tx, tenantId, { filters, cursor, limit }) {
    const after = cursor as { created_at: string; id: string } | null;
    const { rows } = await tx.query(
      `SELECT id, destination_id, event_id, event, participant_id, status, attempts, last_response_status, last_error, replay_of,
              created_at, completed_at, to_json(created_at) #>> '{}' AS cursor_at
       FROM webhook_deliveries
       WHERE tenant_id = $1
         AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
         AND ($4::timestamptz IS NULL OR (created_at, id) > ($4::timestamptz, $5::text))
       ORDER BY created_at, id LIMIT $6`,
      [tenantId, filters.from, filters.to, after?.created_at ?? null, after?.id ?? null, limit],
    );
    const last = rows.at(-1);
    return {
      records: rows.map(({ cursor_at: _c, created_at, completed_at, ...rest }) => ({
        ...rest,
        created_at: (created_at as Date).toISOString(),
        completed_at: (completed_at as Date | null)?.toISOString() ?? null,
      })),
      cursor: rows.length === limit && last ? { created_at: last.cursor_at, id: last.id } : null,
    };
  },
};

