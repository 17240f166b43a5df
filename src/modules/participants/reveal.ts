import { personal, PERSONAL_STANDARD_FIELDS } from '../../platform/privacy.js';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { AppError, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { MASKED_FIELDS } from './fields.js';
import { actorOf, recordPiiAccessInTx } from './service.js';
import * as store from './store.js';

/**
 * Support staff see personal data masked. To read one field in full they state
 * why: the value is returned once and the read lands in the personal-data
 * access log with the reason, the field and who read it. The log itself is
 * readable through the API (`GET /admin/pii-access-log`).
 */
const FIELD_PATTERN = `^(${PERSONAL_STANDARD_FIELDS.join('|')}|custom\\.[a-z][a-z0-9_]{0,63})$`;

export const RevealBody = Type.Object(
  {
    field: Type.String({ pattern: FIELD_PATTERN, examples: ['email'], description: `A masked standard field (${MASKED_FIELDS.join(', ')}) or \`custom.<key>\` of a personal custom field.` }),
    reason: Type.String({ minLength: 10, maxLength: 500, description: 'Why the value is needed (at least 10 characters); kept in the access log.' }),
  },
  { additionalProperties: false },
);

const RevealResponse = Type.Object({
  participant_id: Type.String(),
  field: Type.String(),
  value: Type.Unknown({ ...personal('revealed'), description: 'The value in full; null when the participant has none.' }),
  access_log_id: Type.String({ format: 'uuid' }),
});

const AccessLogQuery = Type.Object(
  {
    participant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

const AccessLogEntry = Type.Object({
  id: Type.String({ format: 'uuid' }),
  occurred_at: Type.String({ format: 'date-time' }),
  actor_type: Type.String(),
  actor_id: Type.String({ description: '`admin_user:<id>`, `api_key:<id>`, a system component or a webhook destination.' }),
  participant_id: Type.Union([Type.String(), Type.Null()]),
  participant_ids: Type.Array(Type.String()),
  fields_accessed: Type.Array(Type.String()),
  row_count: Type.Integer(),
  export_format: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
});

export async function revealField(db: Database, tenantId: string, participantId: string, field: string, reason: string, auth: AuthContext) {
  return db.tenant(tenantId, async (tx) => {
    const profile = await store.readProfile(tx, tenantId, participantId);
    if (!profile) throw notFound('participant');
    let value: unknown;
    if (field.startsWith('custom.')) {
      const custom = profile.custom[field.slice('custom.'.length)];
      if (custom && !custom.personal) throw new AppError('invalid', 'FIELD_NOT_PERSONAL', `${field} is not personal data; it is shown unmasked already`);
      value = custom?.value ?? null;
    } else {
      value = profile.fields[field as keyof typeof profile.fields] ?? null;
    }
    const { actorType, actorId } = actorOf(auth);
    const id = await recordPiiAccessInTx(tx, tenantId, {
      actorType,
      actorId,
      participantId,
      fieldsAccessed: [field],
      rowCount: 1,
      ipAddress: auth.ipAddress ?? null,
      reason,
    });
    return { participant_id: participantId, field, value, access_log_id: id };
  });
}

export async function readAccessLog(db: Database, tenantId: string, query: { participant_id?: string; limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { at: 'timestamp', id: 'uuid' });
  const rows = await db.tenant(tenantId, async (tx) => {
    const { rows: found } = await tx.query(
      `SELECT id, occurred_at, actor_type, actor_id, participant_id, participant_ids, fields_accessed, row_count, export_format, reason
       FROM pii_access_log
       WHERE tenant_id = $1 AND ($2::text IS NULL OR participant_id = $2 OR $2 = ANY (participant_ids))
         AND ($3::timestamptz IS NULL OR (occurred_at, id) < ($3, $4::uuid))
       ORDER BY occurred_at DESC, id DESC LIMIT $5`,
      [tenantId, query.participant_id ?? null, after?.at ?? null, after?.id ?? null, limit + 1],
    );
    return found;
  });
  const page = rows.slice(0, limit).map((row) => ({ ...row, occurred_at: new Date(row.occurred_at).toISOString() }));
  const last = page[page.length - 1];
  return { entries: page, next_cursor: rows.length > limit && last ? encodeCursor({ at: last.occurred_at, id: last.id }) : null };
}

export const revealRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  const tags = ['participants'];

  app.post(
    '/admin/participants/:participant_id/reveal',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'revealParticipantField',
        summary: 'Reveal one personal field of a participant in full, with a stated reason (logged in the personal-data access log)',
        params: Type.Object({ participant_id: Type.String({ minLength: 1, maxLength: 255 }) }),
        body: RevealBody,
        response: { 200: RevealResponse },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return revealField(db, request.auth!.tenantId, request.params.participant_id, request.body.field, request.body.reason, request.auth!);
    },
  );

  app.get(
    '/admin/pii-access-log',
    {
      config: { auth: 'admin', rateLimit: 'listing' },
      schema: {
        tags,
        operationId: 'listPiiAccessLog',
        summary: 'The personal-data access log: every full read and reveal of personal data (newest first)',
        querystring: AccessLogQuery,
        response: { 200: Type.Object({ entries: Type.Array(AccessLogEntry), next_cursor: Type.Union([Type.String(), Type.Null()]) }) },
      },
    },
    async (request) => readAccessLog(db, request.auth!.tenantId, request.query),
  );
};
