import type { ExportSource } from '../../platform/export-sources.js';
import { LIST_PROFILES_MEMBER_PARAMS_FROM, listCustomFields, listProfiles } from './store.js';
import { segmentMembersSqlInTx } from '../../platform/segments.js';
import { canReadPii, personalFieldsOf, recordPiiAccessInTx, viewProfile } from './service.js';
import { STANDARD_FIELDS } from './fields.js';
import { actorOf } from './access-log.js';

/**
 * The participants export: profiles read and masked as the participants API
 * shows them to the requester, and a full read of personal data logged in
 * the personal-data access log like the API's.
 */
export const participantsExport: ExportSource = {
  async columns(tx, tenantId) {
    const custom = await listCustomFields(tx, tenantId);
    return ['participant_id', 'display_name', ...STANDARD_FIELDS, ...custom.map((d) => `custom.${d.key}`), 'masked', 'anonymized', 'created_at', 'updated_at'];
  },
  async page(tx, tenantId, { filters, cursor, limit, auth, format }) {
    const after = cursor as { created_at: string; participant_id: string } | null;
    // The participants store reads one row past `limit` to tell whether another page follows.
    // A segment's export (issue 36): its members as each page is read, set-based inside the page's statement.
    const members = filters.segment_id ? await segmentMembersSqlInTx(tx, tenantId, filters.segment_id, LIST_PROFILES_MEMBER_PARAMS_FROM, '/segment_id') : undefined;
    const read = await listProfiles(tx, tenantId, { createdAfter: filters.from ?? undefined, createdBefore: filters.to ?? undefined, members }, after, limit);
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
          actorId: actorOf(auth).actorId,
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

