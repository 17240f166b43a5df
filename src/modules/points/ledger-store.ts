import { runStatements, type Database, type Statement, type Tx } from '../../platform/db.js';
import { prefixedId } from '../../platform/ids.js';
import { followersRead, followingSql, textWithFollowers, writtenReturning } from '../../platform/outbox.js';
import { DEFAULT_SETTINGS } from './settings-store.js';

/**
 * The statements that change and read a balance: grants (one, or a batch in
 * one statement), the guarded deduct, and the balance reads.
 */

/** An event of a grant or deduct as the statement built it (`GRANT_EVENTS`, `DEDUCTED_EVENT`). */
export interface LedgerEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface GrantRow {
  available: number;
  lifetime: number;
  previous_tier: string | null;
  tier: string | null;
  expires_at: Date | null;
  /** points.awarded.v1, and tier.changed.v1 when the grant moved the tier. */
  events: LedgerEvent[];
}

export interface GrantValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  activityId: string | null;
  engagementId: string | null;
  multiplier: number | null;
  now: Date;
}

/** How a grant or deduct statement treats its events: written to the outbox by the statement (with these ids), or returned for the caller to emit. */
export type EventsMode = { write: true; ids: string[]; traceparent: string | null } | { write: false };

/** ISO 8601 in UTC with milliseconds, as JavaScript's `toISOString` writes it. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Grants in one statement, each as `grantStatement` describes, with their
 * events returned: a processing batch writes its held grants with it
 * (`awardInTx`). Returns one row per grant, in the order given.
 */
export async function insertGrants(tx: Tx, tenantId: string, list: GrantValues[]): Promise<GrantRow[]> {
  const statement = grantStatement(tenantId, list, { write: false });
  const { rows } = await tx.query<GrantRow>(statement.text, [...statement.values]);
  if (rows.length !== list.length) throw new Error(`a batch of ${list.length} grants wrote ${rows.length}`);
  return rows;
}

/** Grants in rounds (`insertGrants` each), as one message: one round trip. Returns each round's rows, in its order. */
export async function insertGrantRounds(tx: Tx, tenantId: string, rounds: GrantValues[][]): Promise<GrantRow[][]> {
  if (rounds.length === 1) return [await insertGrants(tx, tenantId, rounds[0])];
  const answers = await runStatements(tx, rounds.map((list) => grantStatement(tenantId, list, { write: false })));
  return answers.map((rows, r) => {
    if (rows.length !== rounds[r].length) throw new Error(`a round of ${rounds[r].length} grants wrote ${rows.length}`);
    return rows as GrantRow[];
  });
}

/** Ids for the events of `count` grants that `grantStatement` writes (two per grant: points.awarded.v1, tier.changed.v1). */
export function grantEventsWritten(count: number, traceparent: string | null): EventsMode {
  return { write: true, ids: Array.from({ length: 2 * count }, () => prefixedId('evt')), traceparent };
}

/** The id of the event that `deductStatements` writes. */
export function deductEventsWritten(traceparent: string | null): EventsMode {
  return { write: true, ids: [prefixedId('evt')], traceparent };
}

/** `insertGrants` whose statement writes the events itself (a bulk job's batch: nothing else is emitted in its transaction). */
export async function insertGrantsWithEvents(tx: Tx, tenantId: string, list: GrantValues[], traceparent: string | null): Promise<GrantRow[]> {
  const statement = grantStatement(tenantId, list, grantEventsWritten(list.length, traceparent));
  const { rows } = await tx.query<GrantRow>(statement.text, [...statement.values]);
  if (rows.length !== list.length) throw new Error(`a batch of ${list.length} grants wrote ${rows.length}`);
  return rows;
}

/**
 * The grant statement, the one home of a grant's writes and events, for the
 * route, the bulk job and the rule engine: the participant on first sight,
 * the balance (locked by the upsert, so concurrent grants serialise on it),
 * the tier for the new lifetime, a lot with the tenant's expiry, the ledger
 * entry, and the events points.awarded.v1 and (when the tier moved)
 * tier.changed.v1, written to the outbox with their pending markers and what
 * the outbox's followers write for them (`followingSql`), or returned
 * (`events`). The participants must be distinct (a balance row can
 * change once per statement); callers split batches into rounds. The upsert
 * keeps the tier it replaces in `tier_code_before` and returns it
 * (PostgreSQL before 18 has no `RETURNING old.…`; migration 0105).
 *
 * `only` is a condition that must hold for anything to be written (the direct
 * grant sends `CLAIMED`: nothing is written unless its idempotency key was
 * claimed in the same message); the statement then answers no rows. With
 * `events.write`, `events.ids` holds two ids per grant, in order (its
 * points.awarded.v1 and its tier.changed.v1). `actor`, who asked for a
 * direct grant, is kept on its entry.
 */
export function grantStatement(tenantId: string, list: GrantValues[], events: EventsMode, only = 'true', actor: LedgerActor | null = null): Statement {
  const ids = events.write ? events.ids : [];
  const single = list.length === 1;
  // One grant binds scalars: no array to build here, to serialise as an array literal, and to parse and subscript in the database.
  const column = <T>(value: (v: GrantValues) => T) => (single ? value(list[0]) : list.map(value));
  return {
    text: textWithFollowers(`points.grant ${only} ${single ? 'one' : 'many'}`, () => grantText(only, single)),
    values: [
      tenantId,
      column((v) => v.participantId),
      column((v) => v.amount),
      column((v) => v.entryId),
      column((v) => v.type),
      column((v) => v.reason),
      column((v) => v.memo),
      column((v) => v.sourceKind),
      column((v) => v.sourceId),
      column((v) => v.activityId),
      column((v) => v.engagementId),
      column((v) => v.now.toISOString()),
      column((v) => v.multiplier),
      single ? (ids[0] ?? null) : ids.filter((_, i) => i % 2 === 0),
      events.write ? events.traceparent : null,
      events.write,
      single ? (ids[1] ?? null) : ids.filter((_, i) => i % 2 === 1),
      actor?.type ?? null,
      actor?.id ?? null,
    ],
  };
}

/**
 * The grants' input rows: the arrays unnested, or for a single grant its
 * parameters as one row (scalars), so that the planner knows it writes one
 * row and plans the statement with nested loops, without the sorts and
 * hashes a batch needs (a generic plan of the unnest form estimates ten rows
 * per array).
 */
function grantInput(single: boolean): string {
  const columns = ['participant_id', 'amount', 'entry_id', 'type', 'reason', 'memo', 'source_kind', 'source_id', 'activity_id', 'engagement_id', 'at', 'multiplier', 'awarded_id', 'tier_id'];
  const parameters = ['$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9', '$10', '$11', '$12', '$13', '$14', '$17'];
  const types = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'timestamptz', 'numeric', 'text', 'text'];
  if (single) return `SELECT ${parameters.map((parameter, i) => `${parameter}::${types[i]} AS ${columns[i]}`).join(', ')}, 1::bigint AS n`;
  // unnest pads the shorter arrays with NULL: without events.write the id arrays are empty.
  return `SELECT * FROM unnest(${parameters.map((parameter, i) => `${parameter}::${types[i]}[]`).join(', ')}) WITH ORDINALITY AS i (${columns.join(', ')}, n)`;
}

function grantText(only: string, single: boolean): string {
  return `WITH settings AS (
       SELECT coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), '${DEFAULT_SETTINGS.expiry_policy}') AS policy,
              coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), ${DEFAULT_SETTINGS.default_ttl_days}) AS ttl_days
     ),
     input AS (
       SELECT * FROM (${grantInput(single)}) AS i
       WHERE ${only}
     ),
     participant AS (
       -- An index look-up first: ON CONFLICT DO NOTHING on an existing row costs about twenty times as much.
       -- A LATERAL with LIMIT, not NOT EXISTS: a generic plan turns NOT EXISTS into an anti join over every
       -- participant of the tenant.
       INSERT INTO participants (tenant_id, participant_id)
       SELECT $1, i.participant_id FROM input i
       LEFT JOIN LATERAL (SELECT true AS found FROM participants p WHERE p.tenant_id = $1 AND p.participant_id = i.participant_id LIMIT 1) f ON true
       WHERE f.found IS NULL
       ON CONFLICT DO NOTHING
     ),
     balance AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.at,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= i.amount
               ORDER BY t.min_lifetime_points DESC LIMIT 1), i.at
       FROM input i
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code_before = b.tier_code,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING b.participant_id, b.tier_code_before AS previous_tier, b.tier_code AS tier, b.available, b.lifetime
     ),
     lot AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.entry_id, i.at,
              CASE WHEN s.policy = 'none' THEN NULL ELSE i.at + make_interval(days => s.ttl_days) END
       FROM input i CROSS JOIN settings s
       RETURNING ledger_entry_id, expires_at
     ),
     entry AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id, activity_id,
                                  engagement_id, multiplier, available_after, lifetime_after, created_at, actor_type, actor_id)
       SELECT $1, i.participant_id, i.entry_id, i.type, i.amount, i.reason, i.memo, i.source_kind, i.source_id, i.activity_id,
              i.engagement_id, i.multiplier, b.available, b.lifetime, i.at, $18::text, $19::text
       FROM input i JOIN balance b ON b.participant_id = i.participant_id
       ORDER BY i.n
     ),
     granted AS (
       SELECT i.n, i.participant_id, i.engagement_id, i.at, i.awarded_id, i.tier_id, b.available, b.lifetime, b.previous_tier, b.tier, l.expires_at,
              jsonb_build_object(
                'participant_id', i.participant_id, 'amount', i.amount, 'available', b.available, 'lifetime', b.lifetime,
                'reason', i.reason, 'ledger_entry_id', i.entry_id, 'source_kind', i.source_kind, 'source_id', i.source_id,
                'multiplier', i.multiplier, 'type', i.type, 'activity_id', i.activity_id, 'expires_at', ${iso('l.expires_at')}) AS awarded,
              CASE WHEN b.tier IS NOT NULL AND b.tier IS DISTINCT FROM b.previous_tier THEN jsonb_build_object(
                'participant_id', i.participant_id, 'previous_tier', b.previous_tier, 'tier', b.tier, 'lifetime', b.lifetime) END AS tier_changed
       FROM input i
       JOIN balance b ON b.participant_id = i.participant_id
       JOIN lot l ON l.ledger_entry_id = i.entry_id
     ),
     events AS (
       SELECT g.n, e.k, e.id, e.event, g.participant_id, g.engagement_id, e.data, g.at
       FROM granted g, LATERAL (VALUES (1, g.awarded_id, 'points.awarded.v1', g.awarded), (2, g.tier_id, 'tier.changed.v1', g.tier_changed)) AS e (k, id, event, data)
       WHERE e.data IS NOT NULL
     ),
     written AS (
       INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at, traceparent)
       SELECT $1, e.id, e.event, e.participant_id, e.engagement_id::uuid, e.data, e.at, $15 FROM events e
       WHERE $16 ORDER BY e.n, e.k
       RETURNING ${writtenReturning(true)}
     ),
     pending AS (
       INSERT INTO outbox_pending (tenant_id, event_id) SELECT $1, id FROM written
     )${followingSql()},
     lists AS (
       -- The events for the caller to emit; none when the statement wrote them.
       SELECT e.n, json_agg(json_build_object('event', e.event, 'data', e.data) ORDER BY e.k) AS events FROM events e WHERE NOT $16 GROUP BY e.n
     )
     SELECT g.available, g.lifetime, g.previous_tier, g.tier, g.expires_at, coalesce(l.events, '[]') AS events${followersRead()}
     FROM granted g LEFT JOIN lists l ON l.n = g.n
     ORDER BY g.n`;
}

export interface DeductValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  now: Date;
}

/**
 * The guarded deduct, two statements in one message (`runStatements`):
 *
 * 1. the balance, if it covers the amount (the update locks the row, so
 *    concurrent changes of the participant serialise here), and the ledger
 *    entry with the balance after it; no row when the balance is short;
 * 2. the participant's open lots, walked in the tenant's policy order (oldest
 *    first, or newest first under `lifo`) one index step at a time until the
 *    amount is covered, each reduced by what it gives; this statement's own
 *    snapshot is taken after the lock, so it reads the lots as the last
 *    change of the participant left them. Only when 1. wrote its entry.
 *    The same statement reads the balance after it, for a refusal's
 *    `available` (a separate statement cost a bind and an execute per
 *    deduct; this is one index lookup).
 *
 * `only` is a condition as in `grantStatement`.
 */
export async function deduct(tx: Tx, tenantId: string, v: DeductValues): Promise<DeductOutcome> {
  return deductOutcome(await runStatements(tx, deductStatements(tenantId, v, { write: false })), v);
}

export interface DeductOutcome {
  applied: boolean;
  available: number;
  lifetime: number;
  /** points.deducted.v1 when applied and the events were not written. */
  events: LedgerEvent[];
}

/** A direct change's stored response, built from its ledger entry `e`. */
const RESPONSE = `jsonb_build_object(
         'available', e.available_after, 'lifetime', e.lifetime_after, 'delta', e.delta, 'duplicate', false, 'ledger_entry_id', e.id)`;

/**
 * The lot walk of a deduct and the balance after it (statement 2 above).
 * With `respondOnly` (a condition, as `only`), the same statement stores a direct
 * deduct's response on its idempotency key ($4 scope, $5 key), built from the
 * ledger entry, and answers it; or, when there is no entry (a refusal),
 * releases the key, in the transaction of its claim, so a refusal never burns
 * its key. (One statement fewer than a response of its own: a bind, an
 * execute and a snapshot less per deduct.)
 */
function lotWalkText(respondOnly: string | null): string {
  const responding = respondOnly === null
    ? ''
    : `,
       released AS (
         DELETE FROM idempotency_keys WHERE tenant_id = $1 AND scope = $4 AND key = $5 AND ${respondOnly} AND NOT EXISTS (SELECT 1 FROM entry)
       ),
       responded AS (
         UPDATE idempotency_keys k SET response = ${RESPONSE}
         FROM entry e
         WHERE k.tenant_id = $1 AND k.scope = $4 AND k.key = $5 AND ${respondOnly}
         RETURNING k.response
       )`;
  return `WITH RECURSIVE
       -- the primary key; with participant_id a generic plan walks the participant's whole ledger
       entry AS MATERIALIZED (SELECT available_after, lifetime_after, delta, id FROM points_ledger WHERE tenant_id = $1 AND id = $3),
       due AS (SELECT -delta AS amount FROM entry),
       policy AS (SELECT coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), '${DEFAULT_SETTINGS.expiry_policy}') AS name),
       oldest_first (id, take, rest) AS (
         SELECT l.id, least(l.remaining, d.amount), d.amount - least(l.remaining, d.amount)
         FROM due d, policy p, LATERAL (
           SELECT id, remaining FROM points_lots WHERE tenant_id = $1 AND participant_id = $2 AND remaining > 0 ORDER BY id LIMIT 1
         ) l
         WHERE p.name <> 'lifo'
         UNION ALL
         SELECT l.id, least(l.remaining, w.rest), w.rest - least(l.remaining, w.rest)
         FROM oldest_first w, LATERAL (
           SELECT id, remaining FROM points_lots WHERE tenant_id = $1 AND participant_id = $2 AND remaining > 0 AND id > w.id ORDER BY id LIMIT 1
         ) l
         WHERE w.rest > 0
       ),
       newest_first (id, take, rest) AS (
         SELECT l.id, least(l.remaining, d.amount), d.amount - least(l.remaining, d.amount)
         FROM due d, policy p, LATERAL (
           SELECT id, remaining FROM points_lots WHERE tenant_id = $1 AND participant_id = $2 AND remaining > 0 ORDER BY id DESC LIMIT 1
         ) l
         WHERE p.name = 'lifo'
         UNION ALL
         SELECT l.id, least(l.remaining, w.rest), w.rest - least(l.remaining, w.rest)
         FROM newest_first w, LATERAL (
           SELECT id, remaining FROM points_lots WHERE tenant_id = $1 AND participant_id = $2 AND remaining > 0 AND id < w.id ORDER BY id DESC LIMIT 1
         ) l
         WHERE w.rest > 0
       ),
       walked AS (SELECT id, take FROM oldest_first UNION ALL SELECT id, take FROM newest_first),
       taken AS (
         -- By the primary key (= ANY): a join lets a generic plan hash every lot of the participant.
         UPDATE points_lots l SET remaining = l.remaining - (SELECT w.take FROM walked w WHERE w.id = l.id)
         WHERE l.tenant_id = $1 AND l.participant_id = $2 AND l.id = ANY (ARRAY(SELECT id FROM walked))
         RETURNING (SELECT w.take FROM walked w WHERE w.id = l.id) AS take
       )${responding}
       SELECT (SELECT amount FROM due) AS due, (SELECT coalesce(sum(take), 0) FROM taken) AS taken, b.available, b.lifetime${respondOnly === null ? '' : ', (SELECT response FROM responded) AS response'}
       FROM (SELECT 1) AS one LEFT JOIN points_balances b ON b.tenant_id = $1 AND b.participant_id = $2`;
}

const lotWalkTexts = new Map<string | null, string>();

function lotWalk(respondOnly: string | null): string {
  let text = lotWalkTexts.get(respondOnly);
  if (text === undefined) {
    text = lotWalkText(respondOnly);
    lotWalkTexts.set(respondOnly, text);
  }
  return text;
}

/** Where a direct deduct keeps its response: its idempotency key, claimed in the same message. */
export interface DirectKey {
  scope: string;
  key: string;
}

/** With `respond`, the second statement also stores the response on the claimed key, or releases it (`lotWalkText`). */
export function deductStatements(tenantId: string, v: DeductValues, events: EventsMode, only = 'true', actor: LedgerActor | null = null, respond: DirectKey | null = null): Statement[] {
  const applied = deductText(only);
  return [
    {
      text: applied,
      values: [
        tenantId, v.participantId, v.amount, v.entryId, v.type, v.reason, v.memo, v.sourceKind, v.sourceId, v.now.toISOString(),
        events.write ? events.ids[0] : null, events.write ? events.traceparent : null, events.write, actor?.type ?? null, actor?.id ?? null,
      ],
    },
    respond === null
      ? { text: lotWalk(null), values: [tenantId, v.participantId, v.entryId] }
      : { text: lotWalk(only), values: [tenantId, v.participantId, v.entryId, respond.scope, respond.key] },
  ];
}

function deductText(only: string): string {
  return textWithFollowers(`points.deduct ${only}`, () => `WITH balance AS (
         UPDATE points_balances b SET available = b.available - $3, updated_at = $10
         WHERE b.tenant_id = $1 AND b.participant_id = $2 AND b.available >= $3 AND ${only}
         RETURNING b.available, b.lifetime
       ),
       entry AS (
         INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id,
                                    available_after, lifetime_after, created_at, actor_type, actor_id)
         SELECT $1, $2, $4, $5, -$3::bigint, $6, $7, $8, $9, b.available, b.lifetime, $10, $14::text, $15::text FROM balance b
         RETURNING available_after AS available, lifetime_after AS lifetime, jsonb_build_object(
           'participant_id', participant_id, 'amount', -delta, 'available', available_after, 'lifetime', lifetime_after,
           'reason', reason, 'ledger_entry_id', id, 'type', type) AS data
       ),
       written AS (
         INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at, traceparent)
         SELECT $1, $11, 'points.deducted.v1', $2, NULL, e.data, $10, $12 FROM entry e WHERE $13
         RETURNING ${writtenReturning(true)}
       ),
       pending AS (
         INSERT INTO outbox_pending (tenant_id, event_id) SELECT $1, id FROM written
       )${followingSql()}
       SELECT available, lifetime,
              CASE WHEN $13 THEN '[]'::json ELSE json_build_array(json_build_object('event', 'points.deducted.v1', 'data', data)) END AS events${followersRead()}
       FROM entry`);
}

/**
 * A direct grant's stored response, built from its ledger entry and
 * answered: one statement after the grant's. (A direct deduct stores its
 * response in its lot walk: `deductStatements` with `respond`.)
 */
export function respondStatement(tenantId: string, scope: string, key: string, entryId: string, only: string): Statement {
  let text = respondTexts.get(only);
  if (!text) {
    text = `UPDATE idempotency_keys k SET response = ${RESPONSE}
     FROM points_ledger e
     WHERE k.tenant_id = $1 AND k.scope = $2 AND k.key = $3 AND e.tenant_id = $1 AND e.id = $4 AND ${only}
     RETURNING k.response`;
    respondTexts.set(only, text);
  }
  return { text, values: [tenantId, scope, key, entryId] };
}

const respondTexts = new Map<string, string>();

/** What the rows of `deductStatements` mean; a walk that found fewer open lots than the balance said throws (the ledger's invariant). */
export function deductOutcome([applied, lots]: unknown[][], v: DeductValues): DeductOutcome {
  const entry = applied[0] as { available: number; lifetime: number; events: LedgerEvent[] } | undefined;
  const walk = lots[0] as { due: number | null; taken: number; available: number | null; lifetime: number | null };
  if (entry) {
    if (Number(walk.taken) !== v.amount) throw new Error(`points ledger invariant broken: the open lots of ${v.participantId} hold less than the balance`);
    return { applied: true, available: entry.available, lifetime: entry.lifetime, events: entry.events };
  }
  return { applied: false, available: walk.available ?? 0, lifetime: walk.lifetime ?? 0, events: [] };
}

export async function readBalance(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; last_earned_at: Date | null; tier_code: string | null } | null> {
  const { rows } = await tx.query(
    'SELECT available, lifetime, last_earned_at, tier_code FROM points_balances WHERE tenant_id = $1 AND participant_id = $2',
    [tenantId, participantId],
  );
  return rows[0] ?? null;
}

/**
 * A participant's balance with the tenant's currency name in ONE round trip
 * (`db.tenantRead`: read-only, tenant set, identical concurrent reads
 * coalesced), for the participant-facing balance read that pages poll.
 */
export async function readSessionBalance(db: Database, tenantId: string, participantId: string) {
  const [row] = await db.tenantRead<{ available: number | null; lifetime: number | null; last_earned_at: Date | null; currency_name: string | null }>(
    tenantId,
    `SELECT b.available, b.lifetime, b.last_earned_at, s.currency_name
     FROM (SELECT 1) AS one
     LEFT JOIN points_balances b ON b.tenant_id = $1 AND b.participant_id = $2
     LEFT JOIN points_settings s ON s.tenant_id = $1`,
    [tenantId, participantId],
  );
  return { ...row, currency_name: row.currency_name ?? DEFAULT_SETTINGS.currency_name };
}

/** Who asked for a direct change, kept on its ledger entry (migration 1470). */
export interface LedgerActor {
  type: 'user' | 'api_key';
  id: string;
}
