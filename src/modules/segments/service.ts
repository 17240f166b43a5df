import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { AuthContext } from '../../platform/auth.js';
import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, fieldError } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { mayPublish } from '../../platform/publishing.js';
import { canReadPii, maskProfile, readProfileInTx, viewProfile, type ProfileView } from '../participants/index.js';
import { compileSegmentFilter, countSql, membersSql, sizeAndSampleSql } from './compile.js';
import { assertFilter, factCatalogue, factView, findFact, type FactContext } from './facts.js';
import { dropMembershipInTx, refreshLockedInTx, type RefreshOutcome } from './materialize.js';
import { SAMPLE_MAX, type CreateSegmentBody, type Segment, type SegmentCondition, type SegmentFilter, type SegmentFact, type UpdateSegmentBody } from './schemas.js';
import * as store from './store.js';
import type { SegmentRow } from './store.js';

/** Segments: CRUD, the facts catalogue, live size and sample, members, refresh. */

const segmentNotFound = (id: string, path?: string, kind: 'not_found' | 'rule_violation' = 'not_found') =>
  new AppError(kind, 'SEGMENT_NOT_FOUND', `segment "${id}" not found`, path ? { errors: [fieldError(path, 'not_found', `no segment "${id}"`)] } : {});

/**
 * The filter as a caller without read:pii sees it: values of personal facts
 * masked by the participants module's one masking step (standard fields get
 * their partial masks, personal custom fields read `***`).
 */
function maskedFilter(filter: SegmentFilter, context: FactContext, auth: AuthContext | null): SegmentFilter {
  if (canReadPii(auth)) return filter;
  const catalogue = factCatalogue(context);
  const personalCustomKeys = context.custom.filter((f) => f.personal).map((f) => f.key);
  const maskValue = (condition: SegmentCondition, value: unknown): unknown => {
    if (value === null || value === undefined) return value;
    const [head, key] = [condition.fact.slice(0, condition.fact.indexOf('.')), condition.fact.slice(condition.fact.indexOf('.') + 1)];
    const shaped = head === 'custom' ? { custom: { [key]: value } } : { [key]: String(value) };
    const masked = maskProfile(shaped as Record<string, unknown>, auth, { personalCustomKeys }) as Record<string, any>;
    return head === 'custom' ? masked.custom[key] : masked[key];
  };
  const mask = (condition: SegmentCondition): SegmentCondition => {
    // A removed custom field is treated as personal: its classification is no longer known.
    const definition = findFact(catalogue, condition.fact);
    const personal = definition ? definition.personal : condition.fact.startsWith('custom.');
    if (!personal || condition.value === undefined) return condition;
    const value = Array.isArray(condition.value) ? condition.value.map((v) => maskValue(condition, v)) : maskValue(condition, condition.value);
    return { ...condition, value: value as SegmentCondition['value'] };
  };
  return { ...(filter.all ? { all: filter.all.map(mask) } : {}), ...(filter.any ? { any: filter.any.map(mask) } : {}) };
}

async function view(tx: Tx, tenantId: string, row: SegmentRow, auth: AuthContext | null, context?: FactContext): Promise<Segment> {
  const facts = context ?? (await store.factContext(tx, tenantId));
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    filter: maskedFilter(row.filter, facts, auth),
    materialized: row.materialized,
    size: row.materialized && row.size !== null ? Number(row.size) : null,
    refreshed_at: row.refreshed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    used_by: await store.usedBy(tx, tenantId, row.id, clock.now(tenantId)),
    status: row.draft_filter === null ? 'live' : 'draft_pending',
    draft: row.draft_filter === null ? null : { filter: maskedFilter(row.draft_filter, facts, auth), materialized: row.draft_materialized! },
  };
}

async function checkedContext(tx: Tx, tenantId: string, filter: SegmentFilter, auth: AuthContext | null): Promise<FactContext> {
  const context = await store.factContext(tx, tenantId);
  assertFilter(filter, factCatalogue(context), canReadPii(auth));
  return context;
}

async function lockedSegment(tx: Tx, tenantId: string, id: string): Promise<SegmentRow> {
  const row = await store.readSegment(tx, tenantId, id, { lock: true });
  if (!row) throw segmentNotFound(id);
  return row;
}

export async function createSegment(db: Database, tenantId: string, body: CreateSegmentBody, auth: AuthContext | null): Promise<Segment> {
  return db.tenant(tenantId, async (tx) => {
    const context = await checkedContext(tx, tenantId, body.filter, auth);
    const row = await store.insertSegment(
      tx,
      tenantId,
      { id: prefixedId('seg'), name: body.name, description: body.description ?? null, filter: body.filter, materialized: body.materialized ?? false },
      clock.now(),
    );
    if (!row.materialized) return view(tx, tenantId, row, auth, context);
    await refreshLockedInTx(tx, tenantId, row, context);
    return view(tx, tenantId, (await store.readSegment(tx, tenantId, row.id))!, auth, context);
  });
}

export async function listSegments(db: Database, tenantId: string, query: { limit?: number; cursor?: string }, auth: AuthContext | null) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listSegments(tx, tenantId, after, limit + 1);
    const page = rows.slice(0, limit);
    const context = await store.factContext(tx, tenantId);
    const segments: Segment[] = [];
    for (const row of page) segments.push(await view(tx, tenantId, row, auth, context));
    const last = page[page.length - 1] as (SegmentRow & { created_cursor: string }) | undefined;
    return { segments, next_cursor: rows.length > limit && last ? encodeCursor({ created_at: last.created_cursor, id: last.id }) : null };
  });
}

export async function readSegment(db: Database, tenantId: string, id: string, auth: AuthContext | null): Promise<Segment> {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.readSegment(tx, tenantId, id);
    if (!row) throw segmentNotFound(id);
    return view(tx, tenantId, row, auth);
  });
}

/**
 * Changes a segment. Name and description apply at once. A change of the
 * filter or the materialization of a segment used by a live program (`live`
 * in `usedBy`) applies at once only for a caller who may publish; for anyone
 * else (and everyone where the tenant requires four-eyes publishing) it is
 * kept as the segment's draft, for review (`publishSegmentDraftInTx` applies
 * it). A publisher's direct change replaces a pending draft.
 */
export async function updateSegment(db: Database, tenantId: string, id: string, body: UpdateSegmentBody, auth: AuthContext): Promise<Segment> {
  return db.tenant(tenantId, async (tx) => {
    const before = await lockedSegment(tx, tenantId, id);
    const context = body.filter ? await checkedContext(tx, tenantId, body.filter, auth) : await store.factContext(tx, tenantId);
    const touchesMembership = body.filter !== undefined || body.materialized !== undefined;
    if (touchesMembership && !mayPublish(auth) && (await store.usedBy(tx, tenantId, id, clock.now(tenantId))).some((u) => u.live)) {
      const draft = { filter: body.filter ?? before.draft_filter ?? before.filter, materialized: body.materialized ?? before.draft_materialized ?? before.materialized };
      // A draft that asks for what is live already is no draft.
      const same = isDeepStrictEqual(draft.filter, before.filter) && draft.materialized === before.materialized;
      const row = (await store.updateSegment(tx, tenantId, id, { name: body.name, description: body.description, draft: same ? null : draft }, clock.now()))!;
      return view(tx, tenantId, row, auth, context);
    }
    const changes = touchesMembership ? { ...body, draft: null } : body;
    return view(tx, tenantId, await applyInTx(tx, tenantId, before, changes, context), auth, context);
  });
}

/** Writes a change to the locked segment `before` and brings its membership in line (refresh, baseline or drop); the row after. */
async function applyInTx(tx: Tx, tenantId: string, before: SegmentRow, changes: Parameters<typeof store.updateSegment>[3], context: FactContext): Promise<SegmentRow> {
  const row = (await store.updateSegment(tx, tenantId, before.id, changes, clock.now()))!;
  if (!row.materialized) {
    if (before.materialized) await dropMembershipInTx(tx, tenantId, before.id);
    return row;
  }
  // Newly materialized: the baseline (refreshed_at is null, so silent); a changed filter: who entered and left.
  if (before.materialized && !changes.filter) return row;
  await refreshLockedInTx(tx, tenantId, row, context);
  return (await store.readSegment(tx, tenantId, before.id))!;
}

/** The review queue's view of a segment (modules/publishing): it has something to review while a draft waits. */
export async function segmentForReviewInTx(tx: Tx, tenantId: string, id: string, forUpdate = false) {
  const row = await store.readSegment(tx, tenantId, id, { lock: forUpdate });
  return row ? { name: row.name, draft: row.draft_filter !== null, revision: row.updated_at.toISOString() } : null;
}

/**
 * Applies a segment's draft (an approved review, in the decision's
 * transaction): the draft's filter and materialization become the segment's,
 * a materialized segment is refreshed (segment.entered.v1 / segment.left.v1
 * for who moved), and the draft is cleared. The filter is checked again
 * against the catalogue as it is now (a custom field may have gone).
 */
export async function publishSegmentDraftInTx(tx: Tx, tenantId: string, id: string): Promise<void> {
  const before = await lockedSegment(tx, tenantId, id);
  if (before.draft_filter === null || before.draft_materialized === null) throw conflict(`the segment ${JSON.stringify(before.name)} has no draft to publish`, 'REVIEW_ITEM_NOT_DRAFT');
  const context = await store.factContext(tx, tenantId);
  assertFilter(before.draft_filter, factCatalogue(context), true);
  await applyInTx(tx, tenantId, before, { filter: before.draft_filter, materialized: before.draft_materialized, draft: null }, context);
}

const namedUsers = (users: readonly store.SegmentUser[]) => users.map((u) => `${u.type} ${u.name ? `"${u.name}" (${u.id})` : u.id}`).join(', ');

export async function deleteSegment(db: Database, tenantId: string, id: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    await lockedSegment(tx, tenantId, id);
    const users = await store.usedBy(tx, tenantId, id, clock.now(tenantId));
    if (users.length > 0) {
      throw conflict(`segment "${id}" is in use by ${namedUsers(users)}; remove it there first`, 'SEGMENT_IN_USE', { used_by: users });
    }
    await store.deleteSegment(tx, tenantId, id);
  });
}

export async function listFacts(db: Database, tenantId: string): Promise<{ facts: SegmentFact[] }> {
  return db.tenant(tenantId, async (tx) => ({ facts: factCatalogue(await store.factContext(tx, tenantId)).map(factView) }));
}

async function profilesOf(tx: Tx, tenantId: string, ids: readonly string[], auth: AuthContext | null): Promise<ProfileView[]> {
  const profiles: ProfileView[] = [];
  for (const participantId of ids) {
    const profile = await readProfileInTx(tx, tenantId, participantId);
    if (profile) profiles.push(viewProfile(profile, auth));
  }
  return profiles;
}

async function countOf(tx: Tx, tenantId: string, filter: SegmentFilter, context: FactContext): Promise<{ size: number; took_ms: number }> {
  const started = performance.now();
  const compiled = compileSegmentFilter(filter, context, { tenantId, now: clock.now(tenantId) });
  const { rows } = await tx.query(countSql(compiled), compiled.params);
  return { size: Number(rows[0].n), took_ms: Math.round((performance.now() - started) * 10) / 10 };
}

/** The live size of a filter being edited and a masked sample of up to 10 members. */
export async function previewSegment(db: Database, tenantId: string, filter: SegmentFilter, auth: AuthContext | null) {
  return db.tenant(tenantId, async (tx) => {
    const context = await checkedContext(tx, tenantId, filter, auth);
    const started = performance.now();
    const compiled = compileSegmentFilter(filter, context, { tenantId, now: clock.now(tenantId) });
    const { rows } = await tx.query(sizeAndSampleSql(compiled, SAMPLE_MAX), compiled.params);
    const took_ms = Math.round((performance.now() - started) * 10) / 10;
    return { size: Number(rows[0].n), sample: await profilesOf(tx, tenantId, rows[0].sample as string[], auth), took_ms };
  });
}

export async function segmentSize(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.readSegment(tx, tenantId, id);
    if (!row) throw segmentNotFound(id);
    if (row.materialized && row.size !== null && row.refreshed_at) return { size: Number(row.size), took_ms: 0, as_of: row.refreshed_at.toISOString() };
    const as_of = clock.now(tenantId).toISOString();
    return { ...(await countOf(tx, tenantId, row.filter, await store.factContext(tx, tenantId))), as_of };
  });
}

/** A page of members in participant id order: a materialized segment's rows, else the live filter. */
export async function listMembers(db: Database, tenantId: string, id: string, query: { limit?: number; cursor?: string }, auth: AuthContext | null) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { participant_id: 'text' })?.participant_id ?? null;
  return db.tenant(tenantId, async (tx) => {
    const row = await store.readSegment(tx, tenantId, id);
    if (!row) throw segmentNotFound(id);
    let ids: string[];
    if (row.materialized) ids = await store.materializedPage(tx, tenantId, id, after, limit + 1);
    else {
      const compiled = compileSegmentFilter(row.filter, await store.factContext(tx, tenantId), { tenantId, now: clock.now(tenantId) });
      const n = compiled.params.length;
      const { rows } = await tx.query(
        `${membersSql(compiled)}\n  AND ($${n + 1}::text IS NULL OR p.participant_id > $${n + 1}) ORDER BY p.participant_id LIMIT $${n + 2}`,
        [...compiled.params, after, limit + 1],
      );
      ids = rows.map((r: { participant_id: string }) => r.participant_id);
    }
    const page = ids.slice(0, limit);
    return {
      members: await profilesOf(tx, tenantId, page, auth),
      next_cursor: ids.length > limit ? encodeCursor({ participant_id: page[page.length - 1] }) : null,
    };
  });
}

export async function refreshSegment(db: Database, tenantId: string, id: string): Promise<RefreshOutcome> {
  return db.tenant(tenantId, async (tx) => {
    const row = await lockedSegment(tx, tenantId, id);
    if (!row.materialized) {
      throw new AppError('conflict', 'SEGMENT_NOT_MATERIALIZED', `segment "${id}" is not materialized: its size and members are always live; set materialized: true to keep its membership`);
    }
    return refreshLockedInTx(tx, tenantId, row, await store.factContext(tx, tenantId));
  });
}

// ---- for other modules (index.ts) -------------------------------------------------------------

export async function membershipsInTx(tx: Tx, tenantId: string, participantId: string, segmentIds: readonly string[]): Promise<Set<string>> {
  const member = new Set<string>();
  if (segmentIds.length === 0) return member;
  const { rows } = await tx.query(
    `SELECT s.id, s.materialized, CASE WHEN s.materialized THEN NULL ELSE s.filter END AS filter,
            s.materialized AND EXISTS (SELECT 1 FROM segment_members m WHERE m.tenant_id = s.tenant_id AND m.segment_id = s.id AND m.participant_id = $2) AS member
       FROM segments s WHERE s.tenant_id = $1 AND s.id = ANY($3::text[])`,
    [tenantId, participantId, segmentIds],
  );
  const live: Array<{ id: string; filter: SegmentFilter }> = [];
  for (const row of rows as Array<{ id: string; materialized: boolean; filter: SegmentFilter | null; member: boolean }>) {
    if (row.materialized) {
      if (row.member) member.add(row.id);
    } else live.push({ id: row.id, filter: row.filter! });
  }
  if (live.length === 0) return member;
  const context = await store.factContext(tx, tenantId);
  const now = clock.now(tenantId);
  const params: unknown[] = [];
  const selects = live.map(({ id, filter }) => {
    const compiled = compileSegmentFilter(filter, context, { tenantId, now, participantId, firstParam: params.length + 1 });
    params.push(...compiled.params);
    params.push(id);
    return `SELECT $${params.length}::text AS id WHERE EXISTS (SELECT 1 FROM ${compiled.from} WHERE ${compiled.where})`;
  });
  const result = await tx.query(selects.join('\nUNION ALL\n'), params);
  for (const row of result.rows as Array<{ id: string }>) member.add(row.id);
  return member;
}

/** A place that is for a segment's members: its segment (null: everyone) and how a refusal names the place ("the challenge \"Spring\""). */
export interface SegmentTarget {
  segmentId: string | null | undefined;
  what: string;
}

/**
 * Refuses, with 403 NOT_IN_SEGMENT, a participant outside any of the segments
 * `targets` name (nulls are open to everyone). The detail names the first
 * segment missed by its name and the place it guards; `segment_id` is beside it.
 * The one refusal of every module that targets a segment.
 */
export async function assertMemberInTx(tx: Tx, tenantId: string, participantId: string, targets: readonly SegmentTarget[]): Promise<void> {
  const wanted = targets.filter((t): t is { segmentId: string; what: string } => typeof t.segmentId === 'string');
  if (wanted.length === 0) return;
  const members = await membershipsInTx(tx, tenantId, participantId, [...new Set(wanted.map((t) => t.segmentId))]);
  const outside = wanted.find((t) => !members.has(t.segmentId));
  if (!outside) return;
  const name = (await store.readSegment(tx, tenantId, outside.segmentId))?.name;
  const named = name === undefined ? outside.segmentId : JSON.stringify(name);
  throw new AppError('forbidden', 'NOT_IN_SEGMENT', `${outside.what} is for the members of the segment ${named}, and the participant is not one of them`, { segment_id: outside.segmentId });
}

export async function membersSqlInTx(tx: Tx, tenantId: string, segmentId: string, firstParam: number, path?: string): Promise<{ sql: string; params: unknown[] }> {
  const row = await store.readSegment(tx, tenantId, segmentId);
  if (!row) throw segmentNotFound(segmentId, path);
  if (row.materialized) {
    return { sql: `SELECT participant_id FROM segment_members WHERE tenant_id = $${firstParam}::uuid AND segment_id = $${firstParam + 1}::text`, params: [tenantId, segmentId] };
  }
  const compiled = compileSegmentFilter(row.filter, await store.factContext(tx, tenantId), { tenantId, now: clock.now(tenantId), firstParam });
  return { sql: membersSql(compiled), params: compiled.params };
}

export async function assertSegmentsExistInTx(tx: Tx, tenantId: string, segmentIds: readonly string[], path: string): Promise<void> {
  if (segmentIds.length === 0) return;
  const found = await store.existingIds(tx, tenantId, segmentIds);
  const missing = segmentIds.map((id, index) => ({ id, index })).filter(({ id }) => !found.has(id));
  if (missing.length === 0) return;
  const pathOf = (index: number) => (segmentIds.length > 1 || path.endsWith('/value') ? `${path}/${index}` : path);
  throw new AppError('rule_violation', 'SEGMENT_NOT_FOUND', `segment "${missing[0].id}" not found`, {
    errors: missing.map(({ id, index }) => fieldError(pathOf(index), 'not_found', `no segment "${id}"`)),
  });
}
