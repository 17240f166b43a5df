import { mayMatchInBatch } from '../../platform/batch.js';
import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { invalid, notFound } from '../../platform/errors.js';
import { assertNotInRunningExperimentInTx } from '../../platform/experiments.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { assertSegmentsExistInTx, membershipsInTx } from '../segments/index.js';
import * as store from './store.js';
import { multipliersInExperimentsInTx, multiplierServesInTx } from './experiment-multipliers.js';

/**
 * Multipliers: the one that applies to an event, and their definitions
 * (created by the API or, for one participant, by a reward).
 */

/**
 * The multiplier for an event: among the tenant's multipliers whose window
 * holds `at`, whose `event_type` is the event's name, whose `attributes`
 * are all present with equal values in the event's attributes and whose
 * segment (when it names one) the participant is in, the highest wins
 * (multipliers never stack). 1 when none applies.
 */
export async function multiplierForEventInTx(
  tx: Tx,
  tenantId: string,
  input: { participantId: string; eventName: string; attributes: Record<string, unknown>; at: Date },
): Promise<{ multiplier: number; multiplierId: string | null }> {
  // Most events have no multiplier at all: a batch reads the event names that have one once.
  if (!(await mayMatchInBatch(tx, store.multiplierEventTypes, tenantId, input.eventName))) {
    return { multiplier: 1, multiplierId: null };
  }
  // Multipliers that are variants of a running experiment serve only their variant's participants (issue 36).
  const inExperiments = await multipliersInExperimentsInTx(tx, tenantId);
  const candidates = await store.matchingMultipliers(tx, tenantId, input.participantId, input.eventName, input.attributes, input.at, inExperiments);
  const segmentIds = [...new Set(candidates.flatMap((c) => (c.segment_id === null ? [] : [c.segment_id])))];
  const members = segmentIds.length > 0 ? await membershipsInTx(tx, tenantId, input.participantId, segmentIds) : new Set<string>();
  for (const candidate of candidates) {
    if (candidate.segment_id !== null && !members.has(candidate.segment_id)) continue;
    if (inExperiments.has(candidate.id) && !(await multiplierServesInTx(tx, tenantId, candidate.id, input.participantId))) continue;
    return { multiplier: candidate.multiplier, multiplierId: candidate.id };
  }
  return { multiplier: 1, multiplierId: null };
}

export interface MultiplierBody {
  multiplier: number;
  starts_at: string;
  ends_at: string;
  match: { event_type: string; attributes?: Record<string, string | number | boolean> };
  participant_id?: string;
  segment_id?: string | null;
}

export function presentMultiplier(row: store.MultiplierRow) {
  return {
    id: row.id,
    multiplier: row.multiplier,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    match: { event_type: row.event_type, attributes: row.attributes },
    participant_id: row.participant_id,
    segment_id: row.segment_id,
    created_at: row.created_at.toISOString(),
  };
}

export async function createMultiplier(db: Database, tenantId: string, body: MultiplierBody) {
  const startsAt = new Date(body.starts_at);
  const endsAt = new Date(body.ends_at);
  const row = await db.tenant(tenantId, (tx) =>
    createMultiplierRowInTx(tx, tenantId, {
      multiplier: body.multiplier,
      startsAt,
      endsAt,
      match: { event_type: body.match.event_type, attributes: body.match.attributes ?? {} },
      participantId: body.participant_id,
      segmentId: body.segment_id ?? undefined,
    }),
  );
  return presentMultiplier(row);
}

export interface MultiplierInput {
  multiplier: number;
  startsAt: Date;
  endsAt: Date;
  match: { event_type: string; attributes: Record<string, unknown> };
  /** Limits the multiplier to one participant (a `points_multiplier` reward). */
  participantId?: string;
  /** Limits the multiplier to the members of one segment of the tenant. */
  segmentId?: string;
}

async function createMultiplierRowInTx(tx: Tx, tenantId: string, input: MultiplierInput): Promise<store.MultiplierRow> {
  if (!(input.endsAt.getTime() > input.startsAt.getTime())) throw invalid('ends_at must be after starts_at');
  if (!(Number.isFinite(input.multiplier) && input.multiplier > 0)) throw invalid('multiplier must be a positive number');
  if (input.segmentId) await assertSegmentsExistInTx(tx, tenantId, [input.segmentId], '/segment_id');
  return store.insertMultiplier(tx, tenantId, {
    id: prefixedId('mul', 12),
    multiplier: input.multiplier,
    starts_at: input.startsAt,
    ends_at: input.endsAt,
    event_type: input.match.event_type,
    attributes: input.match.attributes,
    participant_id: input.participantId ?? null,
    segment_id: input.segmentId ?? null,
    created_at: clock.now(),
  });
}

/** Creates a multiplier inside the caller's transaction; used by `points_multiplier` rewards for one participant. */
export async function createMultiplierInTx(tx: Tx, tenantId: string, input: MultiplierInput): Promise<{ id: string }> {
  const row = await createMultiplierRowInTx(tx, tenantId, input);
  return { id: row.id };
}

export async function listMultipliers(db: Database, tenantId: string, query: { limit: number; cursor?: string; active_at?: string }) {
  const after = decodeCursor(query.cursor, { c: 'timestamp', i: 'text' });
  const rows = await db.tenant(tenantId, (tx) =>
    store.listMultipliers(tx, tenantId, after ? { createdAt: after.c, id: after.i } : null, query.limit + 1, query.active_at ? new Date(query.active_at) : null),
  );
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    multipliers: page.map(presentMultiplier),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ c: last.created_at.toISOString(), i: last.id }) : null,
  };
}

export async function readMultiplier(db: Database, tenantId: string, id: string) {
  const row = await db.tenant(tenantId, (tx) => store.readMultiplier(tx, tenantId, id));
  if (!row) throw notFound('multiplier');
  return presentMultiplier(row);
}

export async function deleteMultiplier(db: Database, tenantId: string, id: string): Promise<void> {
  const deleted = await db.tenant(tenantId, async (tx) => {
    await assertNotInRunningExperimentInTx(tx, tenantId, 'multiplier', id);
    return store.deleteMultiplier(tx, tenantId, id);
  });
  if (!deleted) throw notFound('multiplier');
}
