import type { ExportSource } from '../../platform/export-sources.js';

const CONTEST_COLUMNS = ['rank', 'final_rank', 'participant_id', 'entry_id', 'display_name', 'score', 'status', 'entered_at', 'reached_at', 'last_scored_at'];

/** Contest results in leaderboard order (score, then earliest to reach it); disqualified entries last, unranked. */
export const contestResultsExport: ExportSource = {
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

