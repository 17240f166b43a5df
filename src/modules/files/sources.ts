import type { Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { canReadPii, listCustomFieldsInTx, listProfilesInTx, personalFieldsOf, recordPiiAccessInTx, STANDARD_FIELDS, viewProfile } from '../participants/index.js';
import { accessLogActorOf } from './access.js';
import type { ExportFilters, ExportKind, FileFormat } from './store.js';

/**
 * What each export kind reads, one keyset page at a time: the CSV columns,
 * and a page function that takes the cursor of the last page and returns the
 * records with the cursor after them (null at the end). A page is one
 * statement on an index order, so an export of a million rows is a million
 * rows read in pages, never a million rows held.
 *
 * Participants are read and masked by the participants module itself
 * (`listProfilesInTx`, `viewProfile`), so an export shows exactly what the
 * participants API shows the same caller, and a full read of personal data
 * is logged in the personal-data access log like the API's. The ledger,
 * contest entries and webhook deliveries are read here with read-only
 * statements on their owners' tables (docs/decisions/files.md says why).
 */
export interface Page {
  records: Array<Record<string, unknown>>;
  cursor: Record<string, unknown> | null;
}

export interface Source {
  columns(tx: Tx, tenantId: string): Promise<string[]>;
  page(tx: Tx, tenantId: string, context: PageContext): Promise<Page>;
}

export interface PageContext {
  filters: ExportFilters;
  cursor: Record<string, unknown> | null;
  limit: number;
  auth: AuthContext;
  format: FileFormat;
}

const participants: Source = {
  async columns(tx, tenantId) {
    const custom = await listCustomFieldsInTx(tx, tenantId);
    return ['participant_id', 'display_name', ...STANDARD_FIELDS, ...custom.map((d) => `custom.${d.key}`), 'masked', 'anonymized', 'created_at', 'updated_at'];
  },
  async page(tx, tenantId, { filters, cursor, limit, auth, format }) {
    const after = cursor as { created_at: string; participant_id: string } | null;
    // The participants store reads one row past `limit` to tell whether another page follows.
    const read = await listProfilesInTx(tx, tenantId, { createdAfter: filters.from ?? undefined, createdBefore: filters.to ?? undefined }, after, limit);
    const rows = read.slice(0, limit);
    const records = rows.map((profile) => {
      const view = viewProfile(profile, auth) as unknown as Record<string, unknown>;
      if (format === 'jsonl') return view;
      // CSV: custom values flattened into `custom.<key>` columns.
      const flat: Record<string, unknown> = { ...view };
      for (const [key, value] of Object.entries(view.custom as Record<string, unknown>)) flat[`custom.${key}`] = value;
      return flat;
    });
    if (canReadPii(auth)) {
      const disclosed = rows.map((profile) => ({ id: profile.participantId, fields: personalFieldsOf(profile) })).filter((d) => d.fields.length > 0);
      if (disclosed.length > 0) {
        await recordPiiAccessInTx(tx, tenantId, {
          actorType: 'admin',
          actorId: accessLogActorOf(auth),
          participantId: disclosed.length === 1 ? disclosed[0].id : null,
          participantIds: disclosed.map((d) => d.id),
          fieldsAccessed: disclosed.flatMap((d) => d.fields),
          rowCount: disclosed.length,
          exportFormat: format === 'csv' ? 'csv' : 'json',
        });
      }
    }
    const last = rows.at(-1);
    return { records, cursor: read.length > limit && last ? last.cursor : null };
  },
};

const LEDGER_COLUMNS = ['id', 'participant_id', 'type', 'amount', 'reason', 'memo', 'source_kind', 'source_id', 'activity_id', 'engagement_id', 'available_after', 'lifetime_after', 'created_at'];

const ledger: Source = {
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

const CONTEST_COLUMNS = ['rank', 'final_rank', 'participant_id', 'entry_id', 'display_name', 'score', 'status', 'entered_at', 'reached_at', 'last_scored_at'];

/** Contest results in leaderboard order (score, then earliest to reach it); disqualified entries last, unranked. */
const contestResults: Source = {
  async columns() {
    return CONTEST_COLUMNS;
  },
  async page(tx, tenantId, { filters, cursor, limit }) {
    const after = cursor as { disqualified: boolean; score: number; reached_at: string; entry_id: string; rank: number } | null;
    const { rows } = await tx.query(
      `SELECT participant_id, entry_id, display_name, score, status, final_rank, entered_at, reached_at, last_scored_at,
              to_json(reached_at) #>> '{}' AS cursor_at, (status = 'disqualified') AS disqualified
       FROM contest_entries
       WHERE tenant_id = $1 AND contest_id = $2
         AND ($3::boolean IS NULL
              OR (status = 'disqualified') > $3
              OR ((status = 'disqualified') = $3 AND (score < $4 OR (score = $4 AND (reached_at, entry_id) > ($5::timestamptz, $6::text)))))
       ORDER BY (status = 'disqualified'), score DESC, reached_at, entry_id LIMIT $7`,
      [tenantId, filters.contest_id, after?.disqualified ?? null, after?.score ?? null, after?.reached_at ?? null, after?.entry_id ?? null, limit],
    );
    let rank = after?.rank ?? 0;
    const records = rows.map((row) => {
      if (!row.disqualified) rank += 1;
      return {
        rank: row.disqualified ? null : rank,
        final_rank: row.final_rank,
        participant_id: row.participant_id,
        entry_id: row.entry_id,
        display_name: row.display_name,
        score: row.score,
        status: row.status,
        entered_at: row.entered_at.toISOString(),
        reached_at: row.reached_at.toISOString(),
        last_scored_at: row.last_scored_at?.toISOString() ?? null,
      };
    });
    const last = rows.at(-1);
    return {
      records,
      cursor: rows.length === limit && last ? { disqualified: last.disqualified, score: Number(last.score), reached_at: last.cursor_at, entry_id: last.entry_id, rank } : null,
    };
  },
};

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

const webhookDeliveries: Source = {
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

export const SOURCES: Record<ExportKind, Source> = {
  participants,
  ledger,
  contest_results: contestResults,
  webhook_deliveries: webhookDeliveries,
};
