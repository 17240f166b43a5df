import type { Database, Tx } from '../../platform/db.js';
import { mayMatchInBatch } from '../../platform/batch.js';
import { clock } from '../../platform/clock.js';
import { bodyChecker } from '../../platform/body-check.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import { conflict, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { ensureParticipant } from '../participants/index.js';
import * as store from './store.js';
import { CreateStreakBody, UpdateStreakBody, type ParticipantStreak, type StreakDefinition } from './schemas.js';

/**
 * Streaks: consecutive days or ISO weeks (tenant time zone) in which a
 * participant did the counted thing. A period counts once; the next period
 * continues the streak; a gap longer than the grace breaks it, and the next
 * activity starts a new streak at 1. `streak.continued.v1` fires whenever the
 * length grows (a new streak too, at 1), `streak.broken.v1` when it breaks —
 * found by the next activity or by the hourly sweep, whichever comes first.
 */

const DAY_MS = 86_400_000;
/** Streaks broken per tenant per sweep transaction; the sweep loops until none are left. */
const SWEEP_BATCH_SIZE = 500;
const SWEEP_BATCHES_MAX = 200;

function toDefinition(row: store.StreakDefinitionRow): StreakDefinition {
  return {
    code: row.code,
    name: row.name,
    period: row.period,
    event_name: row.event_name,
    grace_periods: row.grace_periods,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function createStreak(db: Database, tenantId: string, body: CreateStreakBody): Promise<StreakDefinition> {
  return db.tenant(tenantId, (tx) => createStreakInTx(tx, tenantId, body));
}

/* The admin routes validate with these schemas too; other modules (a sandbox promotion) call the `…InTx` forms directly. */
const checkCreateBody = bodyChecker(CreateStreakBody, 'streak');
const checkUpdateBody = bodyChecker(UpdateStreakBody, 'streak');

/** Defines a streak in the caller's transaction (a sandbox promotion defines several in one). */
export async function createStreakInTx(tx: Tx, tenantId: string, body: CreateStreakBody): Promise<StreakDefinition> {
  checkCreateBody(body, body.code);
  const row = await store.insertDefinition(tx, tenantId, {
    code: body.code,
    name: body.name,
    period: body.period,
    event_name: body.event_name ?? null,
    grace_periods: body.grace_periods ?? 0,
    created_at: clock.now(),
  });
  if (!row) throw conflict(`a streak with the code "${body.code}" already exists`, 'STREAK_EXISTS');
  return toDefinition(row);
}

export async function readStreak(db: Database, tenantId: string, code: string): Promise<StreakDefinition> {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findDefinition(tx, tenantId, code);
    if (!row) throw notFound(`streak "${code}"`);
    return toDefinition(row);
  });
}

export async function listStreaks(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { code: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listDefinitions(tx, tenantId, after?.code ?? null, limit + 1);
    const page = rows.slice(0, limit);
    return { streaks: page.map(toDefinition), next_cursor: rows.length > limit ? encodeCursor({ code: page[page.length - 1].code }) : null };
  });
}

export async function updateStreak(db: Database, tenantId: string, code: string, body: UpdateStreakBody): Promise<StreakDefinition> {
  return db.tenant(tenantId, (tx) => updateStreakInTx(tx, tenantId, code, body));
}

/** `updateStreak` in the caller's transaction. The period is not among the fields: it cannot change. */
export async function updateStreakInTx(tx: Tx, tenantId: string, code: string, body: UpdateStreakBody): Promise<StreakDefinition> {
  checkUpdateBody(body, code);
  const row = await store.updateDefinition(tx, tenantId, code, body, clock.now());
  if (!row) throw notFound(`streak "${code}"`);
  return toDefinition(row);
}

export async function deleteStreak(db: Database, tenantId: string, code: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    if (!(await store.deleteDefinition(tx, tenantId, code))) throw notFound(`streak "${code}"`);
  });
}

export async function missingStreakCodesInTx(tx: Tx, tenantId: string, codes: string[]): Promise<string[]> {
  if (codes.length === 0) return [];
  const found = new Set(await store.findDefinitionCodes(tx, tenantId, codes));
  return codes.filter((code) => !found.has(code));
}

/** Whole periods from `from` to `to` (both period starts, YYYY-MM-DD). */
function periodsBetween(from: string, to: string, period: 'daily' | 'weekly'): number {
  const days = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
  return period === 'daily' ? days : Math.round(days / 7);
}

export interface StreakChange {
  streakCode: string;
  currentLength: number;
  longestLength: number;
  broke: boolean;
}

/** Counts the period of `at` for one streak; returns what changed, or null when the period had counted already. */
async function countPeriod(tx: Tx, tenantId: string, participantId: string, streak: store.CountingStreak, at: Date, events: OutboxEvent[]) {
  const existing = await store.lockStreak(tx, tenantId, participantId, streak.code);
  let next: store.StreakStateRow & { restarted: boolean; brokenNow: boolean };
  let previousLengthBroken: number | null = null;
  if (!existing) {
    next = { current_length: 1, longest_length: 1, last_period_start: streak.period_start, freezes_used: 0, restarted: true, brokenNow: false };
  } else {
    const gap = periodsBetween(existing.last_period_start, streak.period_start, streak.period);
    // An activity in a period that already counted, or in an earlier one (a late event), changes nothing.
    if (gap <= 0) return null;
    const missed = gap - 1;
    if (existing.current_length > 0 && missed <= streak.grace_periods) {
      const current = existing.current_length + 1;
      next = {
        current_length: current,
        longest_length: Math.max(existing.longest_length, current),
        last_period_start: streak.period_start,
        freezes_used: existing.freezes_used + missed,
        restarted: false,
        brokenNow: false,
      };
    } else {
      // The streak broke (now, or earlier as recorded by the sweep): a new one starts at 1.
      if (existing.current_length > 0) previousLengthBroken = existing.current_length;
      next = {
        current_length: 1,
        longest_length: Math.max(existing.longest_length, 1),
        last_period_start: streak.period_start,
        freezes_used: 0,
        restarted: true,
        brokenNow: previousLengthBroken !== null,
      };
    }
  }
  await store.saveStreak(tx, tenantId, participantId, streak.code, next, at);
  if (previousLengthBroken !== null) {
    events.push({
      event: 'streak.broken.v1',
      participantId,
      data: { participant_id: participantId, streak_code: streak.code, previous_length: previousLengthBroken },
    });
  }
  events.push({
    event: 'streak.continued.v1',
    participantId,
    data: {
      participant_id: participantId,
      streak_code: streak.code,
      current_length: next.current_length,
      longest_length: next.longest_length,
      period_start: streak.period_start,
    },
  });
  return { streakCode: streak.code, currentLength: next.current_length, longestLength: next.longest_length, broke: previousLengthBroken !== null };
}

async function countStreaks(tx: Tx, tenantId: string, participantId: string, streaks: store.CountingStreak[], at: Date): Promise<StreakChange[]> {
  if (streaks.length === 0) return [];
  await ensureParticipant(tx, tenantId, participantId);
  const events: OutboxEvent[] = [];
  const changes: StreakChange[] = [];
  for (const streak of streaks) {
    const change = await countPeriod(tx, tenantId, participantId, streak, at, events);
    if (change) changes.push(change);
  }
  await emit(tx, tenantId, events);
  return changes;
}

/** Counts an activity at `at` for the named streaks (an earn rule's effect). Unknown codes are an error. */
export async function continueStreaksInTx(tx: Tx, tenantId: string, input: { participantId: string; streakCodes: string[]; at: Date }) {
  const codes = [...new Set(input.streakCodes)];
  const streaks = await store.countingStreaks(tx, tenantId, { codes }, input.at);
  if (streaks.length !== codes.length) {
    const missing = codes.filter((c) => !streaks.some((s) => s.code === c));
    throw notFound(`streak "${missing.join('", "')}"`, 'STREAK_NOT_FOUND');
  }
  return countStreaks(tx, tenantId, input.participantId, streaks, input.at);
}

/** Counts an event for every streak whose counted event it is. */
export async function continueStreaksForEventInTx(tx: Tx, tenantId: string, input: { participantId: string; eventName: string; at: Date }) {
  if (!(await mayMatchInBatch(tx, store.countedEventNames, tenantId, input.eventName))) return [];
  const streaks = await store.countingStreaks(tx, tenantId, { eventName: input.eventName }, input.at);
  return countStreaks(tx, tenantId, input.participantId, streaks, input.at);
}

/** Records the breaks of every tenant's lapsed streaks and emits `streak.broken.v1` for each. */
export async function sweepLapsedStreaks(db: Database): Promise<number> {
  const tenants = await store.tenantsWithRunningStreaks(db.system);
  let broken = 0;
  for (const tenantId of tenants) {
    for (let batch = 0; batch < SWEEP_BATCHES_MAX; batch++) {
      const count = await db.tenant(tenantId, async (tx) => {
        const lapsed = await store.breakLapsedStreaks(tx, tenantId, clock.now(), SWEEP_BATCH_SIZE);
        await emit(
          tx,
          tenantId,
          lapsed.map((l) => ({
            event: 'streak.broken.v1',
            participantId: l.participant_id,
            data: { participant_id: l.participant_id, streak_code: l.streak_code, previous_length: l.previous_length },
          })),
        );
        return lapsed.length;
      });
      broken += count;
      if (count < SWEEP_BATCH_SIZE) break;
    }
  }
  return broken;
}

/** The `streaks` part of the participant state read. */
export async function participantStreaksInTx(tx: Tx, tenantId: string, participantId: string): Promise<ParticipantStreak[]> {
  const rows = await store.participantStreaks(tx, tenantId, participantId, clock.now());
  return rows.map((r) => ({
    streak_code: r.streak_code,
    name: r.name,
    period: r.period,
    current_length: r.lapsed ? 0 : r.current_length,
    longest_length: r.longest_length,
    last_period_start: r.last_period_start,
    last_activity_at: r.last_activity_at.toISOString(),
    freezes_used: r.lapsed ? 0 : r.freezes_used,
  }));
}
