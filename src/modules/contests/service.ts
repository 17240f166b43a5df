import { createHash, randomBytes } from 'node:crypto';
import { batchState, mayMatchInBatch, onBatchEnd } from '../../platform/batch.js';
import mailchecker from 'mailchecker';
import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import type { Fact } from '../../platform/facts.js';
import { clock } from '../../platform/clock.js';
import { emit, reserveEmit, type OutboxEvent, type OutboxSlot } from '../../platform/outbox.js';
import { addJob } from '../../platform/jobs.js';
import { conflict, forbidden, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { publishingRequired } from '../../platform/publishing.js';
import { ensureParticipant } from '../participants/index.js';
import { readBalanceInTx } from '../points/index.js';
import * as store from './store.js';
import type { ContestRow, EntryRow, PrizeTierDefinition, AllocationRow } from './store.js';
import type { CreateContestBody, UpdateContestBody, EnterBody, ServerEnterBody, FraudDecisionBody, FraudRules } from './schemas.js';

/**
 * Contests: definition and publication, entries, real-time scoring from facts,
 * leaderboards, the lifecycle (scheduled → active → scoring → completed), the
 * final sweep with tie-breakers, prize allocation under the liability cap, the
 * verification hold with manual review, and the fraud controls.
 */
export const ADVANCE_TASK = 'contests.advance';
// graphile-worker's crontab does not accept dots in task names, so the cron task uses a colon.
export const SWEEP_TASK = 'contests:sweep';
/** How often an active contest recomputes its ranks (spec time; scaled by TIME_SCALE). */
export const RANK_TICK_MS = 60_000;
/** Ticks are never closer than this in real time, however small TIME_SCALE is. */
export const RANK_TICK_MIN_MS = 250;
/** The rank-jump cap counts climbs within this window. */
export const RANK_JUMP_WINDOW_MINUTES = 60;
/** The velocity event's history covers five minutes; at most this many score events are listed. */
export const VELOCITY_HISTORY_MAX = 200;
export const ACTIVE_CONTESTS_MAX = 100;
export const STATUS_HISTORY_MAX = 200;
export const STATE_PART_ENTRIES_MAX = 50;
export const WINNERS_MAX = 1000;
export const TIE_GROUPS_AUDITED_MAX = 100;
export const SWEEP_BATCH_MAX = 500;
export const LIFETIME_LOOKUPS_MAX = 1000;

type ContestStatus = ContestRow['status'];

// ---------------------------------------------------------------- views

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function adminView(c: ContestRow) {
  return {
    id: c.id,
    title: c.title,
    description: c.description,
    status: c.status,
    starts_at: iso(c.starts_at)!,
    ends_at: iso(c.ends_at)!,
    scoring: { event_type: c.event_type, score_attribute: c.score_attribute, weight: Number(c.weight) },
    prize_structure: c.prize_structure,
    max_reward_liability: Number(c.max_reward_liability),
    fraud_rules: c.fraud_rules,
    verification_window_hours: c.verification_window_hours,
    entry_count: c.entry_count,
    created_at: iso(c.created_at)!,
    updated_at: iso(c.updated_at)!,
    published_at: iso(c.published_at),
    activated_at: iso(c.activated_at),
    scoring_started_at: iso(c.scoring_started_at),
    completed_at: iso(c.completed_at),
    final_sweep_ms: c.final_sweep_ms,
    verification_ends_at: iso(c.verification_ends_at),
    prizes_issued_at: iso(c.prizes_issued_at),
    liability_allocated: Number(c.liability_allocated),
    tie_break: c.tie_break,
  };
}

export function summaryView(c: ContestRow) {
  return {
    id: c.id,
    name: c.title,
    description: c.description,
    status: c.status,
    starts_at: iso(c.starts_at)!,
    ends_at: iso(c.ends_at)!,
    scoring_method: 'cumulative' as const,
    entry_count: c.entry_count,
  };
}

function entryView(e: EntryRow, rank: number | null) {
  return {
    entry_id: e.entry_id,
    contest_id: e.contest_id,
    participant_id: e.participant_id,
    entered_at: iso(e.entered_at)!,
    score: Number(e.score),
    rank,
    display_name: e.display_name,
    score_events: e.score_events,
    status: e.status as never,
  };
}

async function rankOf(tx: Tx, tenantId: string, contest: ContestRow, entry: EntryRow): Promise<number | null> {
  if (entry.status === 'disqualified') return null;
  if (contest.status === 'completed') return entry.final_rank;
  return store.liveRank(tx, tenantId, entry);
}

export function prizeTierView(tier: PrizeTierDefinition) {
  return {
    rank_from: tier.rank_from,
    rank_to: tier.rank_to,
    label: tier.label ?? (tier.rank_from === tier.rank_to ? `Rank ${tier.rank_from}` : `Ranks ${tier.rank_from}–${tier.rank_to}`),
    reward_name: rewardName(tier),
    reward_type: tier.reward.type as never,
    reward_value: tier.reward.value,
  };
}

function rewardName(tier: PrizeTierDefinition): string {
  return tier.reward.name ?? `${tier.reward.type} ${tier.reward.value}`;
}

// ---------------------------------------------------------------- definition

function checkDefinition(d: { starts_at: Date; ends_at: Date; prize_structure: PrizeTierDefinition[] }): void {
  if (d.ends_at.getTime() <= d.starts_at.getTime()) {
    throw invalid(`ends_at (${d.ends_at.toISOString()}) must be after starts_at (${d.starts_at.toISOString()})`, 'CONTEST_WINDOW_INVALID');
  }
  const tiers = [...d.prize_structure].sort((a, b) => a.rank_from - b.rank_from);
  for (const tier of tiers) {
    if (tier.rank_to < tier.rank_from) {
      throw invalid(`prize_structure: rank_to (${tier.rank_to}) is below rank_from (${tier.rank_from})`, 'CONTEST_PRIZES_INVALID');
    }
  }
  for (let i = 1; i < tiers.length; i++) {
    if (tiers[i].rank_from <= tiers[i - 1].rank_to) {
      throw invalid(
        `prize_structure: ranks ${tiers[i - 1].rank_from}–${tiers[i - 1].rank_to} and ${tiers[i].rank_from}–${tiers[i].rank_to} overlap`,
        'CONTEST_PRIZES_OVERLAP',
      );
    }
  }
}

export async function createContest(db: Database, tenantId: string, body: CreateContestBody) {
  const definition = { starts_at: new Date(body.starts_at), ends_at: new Date(body.ends_at), prize_structure: body.prize_structure };
  checkDefinition(definition);
  return db.tenant(tenantId, async (tx) => {
    const created = await store.insertContest(tx, tenantId, {
      id: body.id,
      title: body.title,
      description: body.description ?? null,
      startsAt: definition.starts_at,
      endsAt: definition.ends_at,
      eventType: body.scoring.event_type,
      scoreAttribute: body.scoring.score_attribute,
      weight: body.scoring.weight,
      prizeStructure: body.prize_structure,
      maxRewardLiability: body.max_reward_liability,
      fraudRules: normalizeFraudRules(body.fraud_rules as FraudRules | undefined),
      verificationWindowHours: body.verification_window_hours ?? 24,
      now: clock.now(tenantId),
    });
    if (!created) throw conflict(`a contest with id "${body.id}" already exists`, 'CONTEST_EXISTS');
    return adminView(created);
  });
}

function normalizeFraudRules(rules: FraudRules | undefined): Record<string, unknown> {
  return { auto_disqualify_on_velocity_breach: false, ...(rules ?? {}) };
}

/** What may change in each state: a draft freely; from scheduled on, scoring and prizes are frozen; once running, only the wording. */
const FROZEN_FROM_SCHEDULED = ['scoring', 'prize_structure'] as const;
const CHANGEABLE_WHILE_RUNNING = new Set(['title', 'description']);

/** With `draftsOnly` (no publishing permission) only a draft may change. */
export async function updateContest(db: Database, config: Config, tenantId: string, id: string, body: UpdateContestBody, draftsOnly = false) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, id, true);
    if (!contest) throw notFound(`contest "${id}"`);
    if (draftsOnly && contest.status !== 'draft') throw publishingRequired(`changing a published contest (this one is ${contest.status})`);
    const fields = Object.keys(body);
    if (contest.status === 'scheduled') {
      const frozen = fields.filter((f) => (FROZEN_FROM_SCHEDULED as readonly string[]).includes(f));
      if (frozen.length > 0) {
        throw ruleViolation(`${frozen.join(' and ')} cannot be changed once the contest is scheduled`, 'CONTEST_FROZEN');
      }
    } else if (contest.status !== 'draft') {
      const refused = fields.filter((f) => !CHANGEABLE_WHILE_RUNNING.has(f));
      if (refused.length > 0) {
        throw ruleViolation(`${refused.join(', ')} cannot be changed once the contest is ${contest.status}; only title and description can`, 'CONTEST_FROZEN');
      }
    }
    const startsAt = body.starts_at ? new Date(body.starts_at) : contest.starts_at;
    const endsAt = body.ends_at ? new Date(body.ends_at) : contest.ends_at;
    checkDefinition({ starts_at: new Date(startsAt), ends_at: new Date(endsAt), prize_structure: body.prize_structure ?? contest.prize_structure });
    if (contest.status === 'scheduled' && (body.starts_at || body.ends_at) && new Date(endsAt).getTime() <= clock.nowMs(tenantId)) {
      throw ruleViolation('ends_at must be in the future for a scheduled contest', 'CONTEST_WINDOW_INVALID');
    }
    const updated = await store.updateContest(
      tx,
      tenantId,
      id,
      {
        title: body.title,
        description: body.description,
        startsAt: body.starts_at ? startsAt : undefined,
        endsAt: body.ends_at ? endsAt : undefined,
        eventType: body.scoring?.event_type,
        scoreAttribute: body.scoring?.score_attribute,
        weight: body.scoring?.weight,
        prizeStructure: body.prize_structure,
        maxRewardLiability: body.max_reward_liability,
        fraudRules: body.fraud_rules ? normalizeFraudRules(body.fraud_rules as FraudRules) : undefined,
        verificationWindowHours: body.verification_window_hours,
      },
      clock.now(tenantId),
    );
    if (updated.status === 'scheduled' && body.starts_at) await scheduleAdvance(tx, config, tenantId, updated.id, new Date(updated.starts_at).getTime());
    return adminView(updated);
  });
}

export async function publishContest(db: Database, config: Config, tenantId: string, id: string) {
  return db.tenant(tenantId, (tx) => publishContestInTx(tx, config, tenantId, id));
}

/** Publishes a draft inside the caller's transaction (a review's approval publishes through here). */
export async function publishContestInTx(tx: Tx, config: Config, tenantId: string, id: string) {
  const contest = await store.readContest(tx, tenantId, id, true);
  if (!contest) throw notFound(`contest "${id}"`);
  if (contest.status !== 'draft') throw conflict(`the contest is already ${contest.status}; only a draft can be published`, 'CONTEST_NOT_DRAFT');
  const now = clock.now(tenantId);
  if (new Date(contest.ends_at).getTime() <= now.getTime()) {
    throw ruleViolation('the contest window has already closed; change ends_at before publishing', 'CONTEST_WINDOW_CLOSED');
  }
  const updated = await store.updateContest(tx, tenantId, id, { status: 'scheduled', publishedAt: now }, now);
  await scheduleAdvance(tx, config, tenantId, id, new Date(updated.starts_at).getTime());
  return adminView(updated);
}

/** What a review needs to know of a contest: its title, whether it is a draft, and a stamp that changes with every edit. */
export async function contestForReviewInTx(tx: Tx, tenantId: string, id: string, forUpdate = false) {
  const contest = await store.readContest(tx, tenantId, id, forUpdate);
  return contest ? { name: contest.title, draft: contest.status === 'draft', revision: new Date(contest.updated_at).toISOString() } : null;
}

export async function readAdminContest(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, id);
    if (!contest) throw notFound(`contest "${id}"`);
    return adminView(contest);
  });
}

export async function listAdminContests(db: Database, tenantId: string, query: { status?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listContests(tx, tenantId, { status: query.status, limit: query.limit + 1, after });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      contests: page.map(adminView),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: iso(last.created_at), id: last.id }) : null,
    };
  });
}

// ---------------------------------------------------------------- participant reads

/** A contest as participants see it: drafts do not exist for them. */
async function visibleContest(tx: Tx, tenantId: string, id: string): Promise<ContestRow> {
  const contest = await store.readContest(tx, tenantId, id);
  if (!contest || contest.status === 'draft') throw notFound(`contest "${id}"`);
  return contest;
}

export async function readPublicContest(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => summaryView(await visibleContest(tx, tenantId, id)));
}

export async function listActiveContests(db: Database, tenantId: string) {
  return db.tenant(tenantId, async (tx) => ({ contests: (await store.listActiveContests(tx, tenantId, ACTIVE_CONTESTS_MAX)).map(summaryView) }));
}

export async function prizes(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const tiers = [...contest.prize_structure].sort((a, b) => a.rank_from - b.rank_from);
    return { contest_id: contest.id, prizes: tiers.map(prizeTierView) };
  });
}

async function leaderboardRows(tx: Tx, tenantId: string, contest: ContestRow, limit: number, offset: number) {
  return contest.status === 'completed'
    ? store.finalLeaderboard(tx, tenantId, contest.id, limit, offset)
    : store.liveLeaderboard(tx, tenantId, contest.id, limit, offset);
}

export async function publicLeaderboard(db: Database, tenantId: string, id: string, limit: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const rows = await leaderboardRows(tx, tenantId, contest, limit, 0);
    return {
      contest_id: contest.id,
      entries: rows.map((r) => ({ rank: r.rank, display_name: r.display_name, score: Number(r.score), last_scored_at: iso(r.last_scored_at) })),
      total_entries: contest.entry_count,
      updated_at: clock.now(tenantId).toISOString(),
    };
  });
}

export async function adminLeaderboard(db: Database, tenantId: string, id: string, limit: number, offset: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, id);
    if (!contest) throw notFound(`contest "${id}"`);
    const rows = await leaderboardRows(tx, tenantId, contest, limit, offset);
    return {
      contest_id: contest.id,
      window: contest.status === 'completed' ? ('final' as const) : ('active' as const),
      as_of: clock.now(tenantId).toISOString(),
      rows: rows.map((r) => ({
        rank: r.rank,
        participant_id: r.participant_id,
        display_name: r.display_name,
        score: Number(r.score),
        entry_id: r.entry_id,
        status: r.status as never,
        reached_at: iso(r.reached_at)!,
      })),
      total_entries: contest.entry_count,
    };
  });
}

export async function bracket(db: Database, tenantId: string, id: string, around: string, size: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const entry = await store.readEntry(tx, tenantId, contest.id, around);
    if (!entry) throw notFound(`an entry of participant "${around}" in contest "${id}"`);
    const rank = await rankOf(tx, tenantId, contest, entry);
    if (rank === null) throw ruleViolation('the entry is not ranked (disqualified)', 'CONTEST_ENTRY_NOT_RANKED');
    const total = contest.status === 'completed' ? rank + size : await store.rankedCount(tx, tenantId, contest.id);
    let start = Math.max(1, rank - Math.floor((size - 1) / 2));
    if (contest.status !== 'completed' && start + size - 1 > total) start = Math.max(1, total - size + 1);
    const rows = await leaderboardRows(tx, tenantId, contest, size, start - 1);
    return {
      contest_id: contest.id,
      around,
      rows: rows.map((r) => ({ rank: r.rank, participant_id: r.participant_id, display_name: r.display_name, score: Number(r.score) })),
      total_entries: contest.entry_count,
    };
  });
}

export async function winners(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const rows = await store.issuedWinners(tx, tenantId, contest.id, WINNERS_MAX);
    return {
      contest_id: contest.id,
      published: contest.prizes_issued_at !== null,
      winners: rows.map((r) => ({
        rank: r.rank,
        display_name: r.publish_consent ? r.display_name : null,
        reward_type: r.reward_type as never,
        reward_name: r.reward_name,
      })),
    };
  });
}

// ---------------------------------------------------------------- entries

interface EntryInput {
  participantId: string;
  displayName: string | null;
  email: string | null;
  paymentMethod: string | null;
  deviceFingerprint: string | null;
  publishConsent: boolean | null;
  actor: string;
}

export function isDisposableEmail(email: string): boolean {
  const domain = email.split('@').pop()?.toLowerCase() ?? '';
  const blacklist = mailchecker.blacklist();
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (blacklist.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

/** The entry-time fraud controls: each configured block refuses the entry with a 422 that names it. */
async function checkEntrySignals(tx: Tx, tenantId: string, contest: ContestRow, input: EntryInput): Promise<void> {
  const rules = contest.fraud_rules as FraudRules;
  if (rules.block_disposable_emails && input.email && isDisposableEmail(input.email)) {
    throw ruleViolation('the email address belongs to a disposable email provider, which this contest does not accept', 'CONTEST_DISPOSABLE_EMAIL');
  }
  if (rules.block_repeat_payment_methods && input.paymentMethod) {
    const shared = await store.countSharedSignal(tx, tenantId, contest.id, input.participantId, 'payment_method', input.paymentMethod);
    if (shared > 0) throw ruleViolation('this payment method is already used by another entry of the contest', 'CONTEST_REPEAT_PAYMENT_METHOD');
  }
  if (rules.block_repeat_devices && input.deviceFingerprint) {
    const shared = await store.countSharedSignal(tx, tenantId, contest.id, input.participantId, 'device_fingerprint', input.deviceFingerprint);
    if (shared > 0) throw ruleViolation('this device is already used by another entry of the contest', 'CONTEST_REPEAT_DEVICE');
  }
}

async function enterInTx(tx: Tx, tenantId: string, contestId: string, input: EntryInput) {
  const contest = await visibleContest(tx, tenantId, contestId);
  const existing = await store.readEntry(tx, tenantId, contestId, input.participantId);
  if (!existing && contest.status !== 'scheduled' && contest.status !== 'active') {
    throw ruleViolation(`the contest is ${contest.status}; entries are accepted while it is scheduled or active`, 'CONTEST_NOT_OPEN');
  }
  // The lifecycle job closes a contest within a tick of ends_at; the window itself decides at once.
  if (!existing && clock.nowMs(tenantId) >= new Date(contest.ends_at).getTime()) {
    throw ruleViolation(`the contest ended at ${iso(contest.ends_at)}; entries are no longer accepted`, 'CONTEST_NOT_OPEN');
  }
  if (existing && contest.status !== 'scheduled' && contest.status !== 'active') {
    return { entry: entryView(existing, await rankOf(tx, tenantId, contest, existing)), created: false };
  }
  await checkEntrySignals(tx, tenantId, contest, input);
  await ensureParticipant(tx, tenantId, input.participantId, input.displayName);
  const { entry, created } = await store.insertEntry(tx, tenantId, {
    contestId,
    participantId: input.participantId,
    entryId: prefixedId('ent', 12),
    displayName: input.displayName,
    email: input.email,
    paymentMethod: input.paymentMethod,
    deviceFingerprint: input.deviceFingerprint,
    publishConsent: input.publishConsent,
    now: clock.now(tenantId),
    actor: input.actor,
  });
  return { entry: entryView(entry, await rankOf(tx, tenantId, contest, entry)), created };
}

/** A participant enters through its own session; it cannot name another participant. */
export async function enterAsParticipant(db: Database, tenantId: string, sessionParticipantId: string, sessionId: string, contestId: string, body: EnterBody) {
  if (body.participant_id !== undefined && body.participant_id !== sessionParticipantId) {
    throw forbidden('participant_id must be the session\'s own participant; a session cannot enter someone else');
  }
  return db.tenant(tenantId, (tx) =>
    enterInTx(tx, tenantId, contestId, {
      participantId: sessionParticipantId,
      displayName: body.display_name ?? null,
      email: null,
      paymentMethod: null,
      deviceFingerprint: body.device_fingerprint ?? null,
      publishConsent: body.publish_consent ?? null,
      actor: `session:${sessionId}`,
    }),
  );
}

/** The tenant's server enters a participant (API key), and may attach the verification signals it knows. */
export async function enterByServer(db: Database, tenantId: string, actorId: string, contestId: string, body: ServerEnterBody) {
  return db.tenant(tenantId, (tx) =>
    enterInTx(tx, tenantId, contestId, {
      participantId: body.participant_id,
      displayName: body.display_name ?? null,
      email: body.email ?? null,
      paymentMethod: body.payment_method ?? null,
      deviceFingerprint: body.device_fingerprint ?? null,
      publishConsent: body.publish_consent ?? null,
      actor: `key:${actorId}`,
    }),
  );
}

export async function me(db: Database, tenantId: string, contestId: string, participantId: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, contestId);
    const entry = await store.readEntry(tx, tenantId, contestId, participantId);
    if (!entry) throw notFound(`an entry of this participant in contest "${contestId}"`);
    return entryView(entry, await rankOf(tx, tenantId, contest, entry));
  });
}

export async function entryAdminView(db: Database, tenantId: string, contestId: string, participantId: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, contestId);
    if (!contest) throw notFound(`contest "${contestId}"`);
    const entry = await store.readEntry(tx, tenantId, contestId, participantId);
    if (!entry) throw notFound(`an entry of participant "${participantId}" in contest "${contestId}"`);
    const history = await store.statusHistory(tx, tenantId, contestId, participantId, STATUS_HISTORY_MAX);
    const prize = await store.readAllocation(tx, tenantId, contestId, participantId);
    return {
      entry: entryView(entry, await rankOf(tx, tenantId, contest, entry)),
      signals: { email: entry.email, payment_method: entry.payment_method, device_fingerprint: entry.device_fingerprint, publish_consent: entry.publish_consent },
      status_history: history.map((h) => ({ ...h, from_status: h.from_status as never, to_status: h.to_status as never, changed_at: iso(h.changed_at)! })),
      prize: prize
        ? {
            rank: prize.rank,
            reward_type: prize.reward_type as never,
            reward_value: Number(prize.reward_value),
            reward_name: prize.reward_name,
            status: prize.status,
            prize_code: prize.prize_code,
            issued_at: iso(prize.issued_at),
          }
        : null,
    };
  });
}

/** The `contests` part of the participant state read: the participant's latest entries. */
export async function statePart(tx: Tx, tenantId: string, participantId: string) {
  const entries = await store.entriesOfParticipant(tx, tenantId, participantId, STATE_PART_ENTRIES_MAX);
  return { entries: entries.map((e) => entryView(e, e.status === 'disqualified' ? null : (e.final_rank ?? e.rank))) };
}

// ---------------------------------------------------------------- scoring

/**
 * The fact handler: adds `score_attribute × weight` to the participant's entry
 * in every running contest whose `scoring.event_type` is the fact's name, once
 * per (contest, fact), then applies the velocity caps. Inside a processing
 * batch the facts are held and scored together when the batch ends, with the
 * same outcome as one by one (see scoreFactsInTx); each fact's breach events
 * keep its place among the batch's events.
 */
export async function scoreFactInTx(tx: Tx, tenantId: string, fact: Fact): Promise<void> {
  if (!(await mayMatchInBatch(tx, `contests:scored-events:${tenantId}`, fact.name, () => store.scoredEventTypes(tx, tenantId)))) return;
  const held = batchState(tx, `contests:held-facts:${tenantId}`, () => {
    const state = { facts: [] as Fact[], slots: [] as Array<OutboxSlot | null> };
    onBatchEnd(tx, () => scoreFactsInTx(tx, tenantId, state.facts.splice(0), state.slots.splice(0)));
    return state;
  });
  if (!held) return scoreFactsInTx(tx, tenantId, [fact], [null]);
  held.facts.push(fact);
  held.slots.push(reserveEmit(tx, tenantId));
}

type Cap = { cap: 'per_minute' | 'per_hour'; limit: number | undefined; value: number };

/**
 * Scores facts in their order with two statements whatever their number: one
 * reads what each fact may score with the entry's recent score before these
 * facts, one records the scores. The velocity caps are checked per fact in
 * between, in order, counting the earlier facts of the call as scored, so a
 * breach is reported at the fact that carries the score over a cap (one event
 * per crossing), and an entry a breach disqualifies scores none of the later
 * facts, exactly as when each fact is scored on its own. `slots[i]` is where
 * fact i's breach events go among held emits (null: emitted at once).
 */
async function scoreFactsInTx(tx: Tx, tenantId: string, facts: Fact[], slots: Array<OutboxSlot | null>): Promise<void> {
  if (facts.length === 0) return;
  const matches = await store.matchFacts(tx, tenantId, facts);
  const entries = new Map<string, { scored: store.FactMatch[]; disqualified: boolean }>();
  const scored: store.FactMatch[] = [];
  const breaches: Array<{ match: store.FactMatch; crossed: Cap[]; disqualify: boolean }> = [];
  for (const match of matches) {
    const key = `${match.contest_id}\n${match.participant_id}`;
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = { scored: [], disqualified: false }));
    if (entry.disqualified || entry.scored.some((s) => s.fact_id === match.fact_id)) continue;
    entry.scored.push(match);
    scored.push(match);
    const rules = match.fraud_rules as FraudRules;
    if (rules.max_score_per_minute === undefined && rules.max_score_per_hour === undefined) continue;
    const at = new Date(match.occurred_at).getTime();
    const scoredWithin = (ms: number) =>
      entry.scored.reduce((sum, s) => {
        const t = new Date(s.occurred_at).getTime();
        return t > at - ms && t <= at ? sum + s.delta : sum;
      }, 0);
    const caps: Cap[] = [
      { cap: 'per_minute', limit: rules.max_score_per_minute, value: match.prior_minute + scoredWithin(60_000) },
      { cap: 'per_hour', limit: rules.max_score_per_hour, value: match.prior_hour + scoredWithin(3_600_000) },
    ];
    // A breach is reported when this fact carries the score over the cap, so one crossing yields one event.
    const crossed = caps.filter((c) => c.limit !== undefined && c.value > c.limit && c.value - match.delta <= c.limit);
    if (crossed.length === 0) continue;
    const disqualify = rules.auto_disqualify_on_velocity_breach === true;
    breaches.push({ match, crossed, disqualify });
    if (disqualify) entry.disqualified = true;
  }
  const now = clock.now(tenantId);
  await store.recordScores(tx, tenantId, scored, now);

  const breachEvents = new Map<number, OutboxEvent[]>();
  for (const { match, crossed, disqualify } of breaches) {
    const later = entries.get(`${match.contest_id}\n${match.participant_id}`)!.scored.filter((s) => s.ordinal > match.ordinal).map((s) => s.fact_id);
    const history = (await store.velocityHistory(tx, tenantId, match.contest_id, match.participant_id, match.occurred_at, VELOCITY_HISTORY_MAX, later)).map((h) => ({
      at: new Date(h.at).toISOString(),
      score: Number(h.score),
    }));
    const events = breachEvents.get(match.ordinal) ?? [];
    breachEvents.set(match.ordinal, events);
    events.push(
      ...crossed.map((b) => ({
        event: 'fraud.velocity_breach',
        participantId: match.participant_id,
        data: {
          participant_id: match.participant_id,
          contest_id: match.contest_id,
          entry_id: match.entry_id,
          cap: b.cap,
          limit: b.limit,
          observed: b.value,
          history,
          action: disqualify ? 'disqualified' : 'flagged',
        },
      })),
    );
    const reason = `velocity_breach:${crossed.map((b) => b.cap).join(',')}`;
    await store.setEntryStatus(
      tx,
      tenantId,
      [{ contestId: match.contest_id, participantId: match.participant_id, to: disqualify ? 'disqualified' : 'flagged', reason }],
      'fraud',
      now,
      disqualify ? ['active', 'flagged'] : ['active'],
    );
  }
  for (const [i, slot] of slots.entries()) {
    const events = breachEvents.get(i + 1) ?? [];
    if (slot) slot.fill(events, clock.now());
    else if (events.length > 0) await emit(tx, tenantId, events);
  }
}

// ---------------------------------------------------------------- lifecycle

function tickIntervalMs(config: Config): number {
  return Math.max(RANK_TICK_MIN_MS, RANK_TICK_MS * config.timeScale);
}

export function verificationWindowMs(config: Config, hours: number): number {
  return hours * 3_600_000 * config.timeScale;
}

/**
 * Schedules the contest's lifecycle job for a moment of the service clock. The
 * job queue runs on the database's time, so the delay is translated; one job
 * key per contest keeps a single pending job.
 */
export async function scheduleAdvance(tx: Tx, config: Config, tenantId: string, contestId: string, dueMs: number): Promise<void> {
  const delayMs = Math.max(0, dueMs - clock.nowMs(tenantId));
  await addJob(tx, ADVANCE_TASK, { tenant_id: tenantId, contest_id: contestId }, { runAt: new Date(Date.now() + delayMs), jobKey: advanceJobKey(tenantId, contestId) });
  void config;
}

const advanceJobKey = (tenantId: string, contestId: string) => `contests.advance:${tenantId}:${contestId}`;

/** Steps the contest forward as far as the clock allows, one transaction per step, then schedules the next step. */
export async function advanceContest(db: Database, config: Config, tenantId: string, contestId: string): Promise<ContestStatus | null> {
  for (let step = 0; step < 5; step++) {
    const moved = await db.tenant(tenantId, async (tx) => {
      const contest = await store.readContest(tx, tenantId, contestId, true);
      if (!contest) return { moved: false, status: null };
      const now = clock.now(tenantId);
      const result = await stepContest(tx, config, tenantId, contest, now);
      if (!result.moved) await scheduleNext(tx, config, tenantId, result.contest);
      return { moved: result.moved, status: result.contest.status };
    });
    if (!moved.moved) return moved.status as ContestStatus | null;
  }
  return null;
}

async function scheduleNext(tx: Tx, config: Config, tenantId: string, contest: ContestRow): Promise<void> {
  const now = clock.nowMs(tenantId);
  switch (contest.status) {
    case 'scheduled':
      return scheduleAdvance(tx, config, tenantId, contest.id, new Date(contest.starts_at).getTime());
    case 'active':
      return scheduleAdvance(tx, config, tenantId, contest.id, Math.min(new Date(contest.ends_at).getTime(), now + tickIntervalMs(config)));
    case 'scoring':
      return scheduleAdvance(tx, config, tenantId, contest.id, now);
    case 'completed':
      if (!contest.prizes_issued_at && contest.verification_ends_at) {
        return scheduleAdvance(tx, config, tenantId, contest.id, new Date(contest.verification_ends_at).getTime());
      }
      return;
    default:
      return;
  }
}

async function stepContest(tx: Tx, config: Config, tenantId: string, contest: ContestRow, now: Date): Promise<{ moved: boolean; contest: ContestRow }> {
  const nowMs = now.getTime();
  switch (contest.status) {
    case 'scheduled':
      if (nowMs < new Date(contest.starts_at).getTime()) return { moved: false, contest };
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { status: 'active', activatedAt: now }, now) };
    case 'active': {
      await checkRankJumps(tx, tenantId, contest, now);
      if (nowMs < new Date(contest.ends_at).getTime()) return { moved: false, contest };
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { status: 'scoring', scoringStartedAt: now }, now) };
    }
    case 'scoring':
      return { moved: true, contest: await finalSweep(tx, config, tenantId, contest, now) };
    case 'completed':
      if (contest.prizes_issued_at || !contest.verification_ends_at || nowMs < new Date(contest.verification_ends_at).getTime()) {
        return { moved: false, contest };
      }
      await issueVerifiedPrizes(tx, tenantId, contest.id, null, now);
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { prizesIssuedAt: now }, now) };
    default:
      return { moved: false, contest };
  }
}

async function checkRankJumps(tx: Tx, tenantId: string, contest: ContestRow, now: Date): Promise<void> {
  const cap = (contest.fraud_rules as FraudRules).max_rank_jump_per_hour ?? null;
  const jumps = await store.tickRanks(tx, tenantId, contest.id, now, cap);
  if (jumps.length === 0) return;
  await emit(
    tx,
    tenantId,
    jumps.map((j) => ({
      event: 'fraud.suspicious_rank_jump',
      participantId: j.participant_id,
      data: {
        participant_id: j.participant_id,
        contest_id: contest.id,
        entry_id: j.entry_id,
        from_rank: j.from_rank,
        to_rank: j.to_rank,
        window_minutes: RANK_JUMP_WINDOW_MINUTES,
        limit: cap,
      },
    })),
  );
  await store.setEntryStatus(
    tx,
    tenantId,
    jumps.map((j) => ({ contestId: contest.id, participantId: j.participant_id, to: 'flagged', reason: `suspicious_rank_jump:${j.from_rank}->${j.to_rank}` })),
    'fraud',
    now,
    ['active'],
  );
}

/**
 * The lifetime score of tied participants, for the second tie-breaker: the
 * participant's lifetime points, read through the points module's public
 * surface. Only entries that tie on score and time are looked up, at most
 * LIFETIME_LOOKUPS_MAX of them; beyond that the draw decides.
 */
async function lifetimeScores(tx: Tx, tenantId: string, participantIds: string[]): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  for (const participantId of participantIds.slice(0, LIFETIME_LOOKUPS_MAX)) {
    result.set(participantId, (await readBalanceInTx(tx, tenantId, participantId)).lifetime);
  }
  return result;
}

/**
 * The final sweep (status `scoring`): freezes the final ranks with the
 * tie-breakers, allocates the prizes by rank until the liability cap, puts
 * winners into verification (suspicious ones into manual review), marks the
 * contest completed and emits `contest.completed.v1` — all in one transaction.
 */
async function finalSweep(tx: Tx, config: Config, tenantId: string, contest: ContestRow, now: Date): Promise<ContestRow> {
  const startedMs = Date.now();
  const groups = await store.tiedGroups(tx, tenantId, contest.id, TIE_GROUPS_AUDITED_MAX);
  const seed = randomBytes(16).toString('hex');
  const lifetime = await lifetimeScores(tx, tenantId, groups.flatMap((g) => g.participants));
  const tiers = [...contest.prize_structure].sort((a, b) => a.rank_from - b.rank_from);
  const lastPrizeRank = tiers.length ? tiers[tiers.length - 1].rank_to : 0;
  await store.freezeFinalRanks(tx, tenantId, contest.id, seed, lifetime, lastPrizeRank);
  const resolved = groups.length ? await store.finalRanksOf(tx, tenantId, contest.id, groups.flatMap((g) => g.participants)) : [];
  const rankOfParticipant = new Map(resolved.map((r) => [r.participant_id, r.final_rank]));
  const tieBreak = {
    seed,
    method: 'score desc, earliest to reach the score, lifetime points desc, then md5(seed || entry_id) asc',
    groups: groups.map((g) => ({
      score: Number(g.score),
      reached_at: iso(g.reached_at),
      entries: g.participants
        .map((p, i) => ({ participant_id: p, entry_id: g.entry_ids[i], lifetime: lifetime.get(p) ?? 0, draw: drawOf(seed, g.entry_ids[i]), final_rank: rankOfParticipant.get(p) ?? null }))
        .sort((a, b) => (a.final_rank ?? 0) - (b.final_rank ?? 0)),
    })),
  };

  const placed = await store.entriesUpToRank(tx, tenantId, contest.id, lastPrizeRank);
  const { allocations, liability } = allocate(placed, tiers, Number(contest.max_reward_liability));
  const reviews = await verificationReasons(tx, tenantId, contest, placed, allocations);

  const statusChanges: Array<{ contestId: string; participantId: string; to: string; reason: string }> = [];
  const reviewRows: Array<{ id: string; contestId: string; participantId: string; entryId: string; reasons: string[] }> = [];
  for (const allocation of allocations) {
    if (allocation.status === 'unfunded') {
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'unfunded', reason: 'max_reward_liability reached' });
      continue;
    }
    const reasons = reviews.get(allocation.participant_id);
    if (reasons && reasons.length > 0) {
      allocation.status = 'held';
      reviewRows.push({ id: prefixedId('rev', 12), contestId: contest.id, participantId: allocation.participant_id, entryId: allocation.entry_id, reasons });
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'under_review', reason: reasons.join(',') });
    } else {
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'winner', reason: `rank ${allocation.rank}: pending verification` });
    }
  }
  // Ranks inside the prize range that fall in a gap between tiers win nothing.
  const allocated = new Set(allocations.map((a) => a.participant_id));
  for (const entry of placed) {
    if (!allocated.has(entry.participant_id) && (entry.status === 'active' || entry.status === 'flagged')) {
      statusChanges.push({ contestId: contest.id, participantId: entry.participant_id, to: 'finished', reason: 'ranked outside the prizes' });
    }
  }
  await store.insertAllocations(tx, tenantId, contest.id, allocations, now);
  await store.insertReviews(tx, tenantId, reviewRows, now);
  await store.setEntryStatus(tx, tenantId, statusChanges, 'lifecycle', now);

  const events = reviewRows.map((r) => ({
    event: 'fraud.review_required',
    participantId: r.participantId,
    data: { participant_id: r.participantId, contest_id: contest.id, entry_id: r.entryId, reason: r.reasons.join(','), reasons: r.reasons },
  }));
  const completed = await store.updateContest(
    tx,
    tenantId,
    contest.id,
    {
      status: 'completed',
      completedAt: now,
      verificationEndsAt: new Date(now.getTime() + verificationWindowMs(config, contest.verification_window_hours)),
      liabilityAllocated: liability,
      tieBreak,
      finalSweepMs: Date.now() - startedMs,
    },
    now,
  );
  await emit(tx, tenantId, [
    ...events,
    { event: 'contest.completed.v1', participantId: null, data: { participant_id: null, contest_id: contest.id, completed_at: now.toISOString(), total_entries: contest.entry_count } },
  ]);
  return completed;
}

function drawOf(seed: string, entryId: string): string {
  // Mirrors md5(seed || entry_id) in the final ranking so the audit shows the draw that decided.
  return createHash('md5').update(seed + entryId).digest('hex');
}

/**
 * Assigns each placed entry its tier's reward in rank order while the sum stays
 * within max_reward_liability; from the first prize that does not fit, every
 * later rank is unfunded (allocation stops).
 */
function allocate(placed: EntryRow[], tiers: PrizeTierDefinition[], maxLiability: number) {
  const allocations: AllocationRow[] = [];
  let liability = 0;
  let stopped = false;
  for (const entry of placed) {
    const tier = tiers.find((t) => entry.final_rank! >= t.rank_from && entry.final_rank! <= t.rank_to);
    if (!tier) continue;
    const value = tier.reward.value;
    if (!stopped && liability + value > maxLiability) stopped = true;
    if (!stopped) liability += value;
    allocations.push({
      participant_id: entry.participant_id,
      entry_id: entry.entry_id,
      rank: entry.final_rank!,
      reward_type: tier.reward.type,
      reward_value: value,
      reward_name: rewardName(tier),
      status: stopped ? 'unfunded' : 'pending_verification',
      prize_code: null,
      issued_at: null,
    });
  }
  return { allocations, liability };
}

/** The verification checks (identity, payment method, device, flags, review threshold) of each funded winner. */
async function verificationReasons(tx: Tx, tenantId: string, contest: ContestRow, placed: EntryRow[], allocations: AllocationRow[]) {
  const rules = contest.fraud_rules as FraudRules;
  const funded = new Set(allocations.filter((a) => a.status !== 'unfunded').map((a) => a.participant_id));
  const reasons = new Map<string, string[]>();
  for (const entry of placed) {
    if (!funded.has(entry.participant_id)) continue;
    const list: string[] = [];
    if (entry.status === 'flagged') list.push('flagged');
    if (rules.review_threshold_score !== undefined && Number(entry.score) >= rules.review_threshold_score) list.push('review_threshold_score');
    if (entry.email && isDisposableEmail(entry.email)) list.push('disposable_email');
    if (entry.payment_method && (await store.countSharedSignal(tx, tenantId, contest.id, entry.participant_id, 'payment_method', entry.payment_method)) > 0) {
      list.push('repeat_payment_method');
    }
    if (entry.device_fingerprint && (await store.countSharedSignal(tx, tenantId, contest.id, entry.participant_id, 'device_fingerprint', entry.device_fingerprint)) > 0) {
      list.push('repeat_device');
    }
    reasons.set(entry.participant_id, list);
  }
  return reasons;
}

const PRIZE_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function prizeCodes(n: number): string[] {
  return Array.from({ length: n }, () => {
    const bytes = randomBytes(12);
    const chars = [...bytes].map((b) => PRIZE_CODE_ALPHABET[b % PRIZE_CODE_ALPHABET.length]).join('');
    return `PRZ-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
  });
}

/** Issues the codes of verified allocations and emits exactly one `contest.prize_allocated.v1` per winner. */
async function issueVerifiedPrizes(tx: Tx, tenantId: string, contestId: string, participantIds: string[] | null, now: Date) {
  const issued = await store.issuePrizes(tx, tenantId, contestId, participantIds, prizeCodes, now);
  if (issued.length === 0) return issued;
  await store.setEntryStatus(
    tx,
    tenantId,
    issued.map((a) => ({ contestId, participantId: a.participant_id, to: 'paid', reason: `prize code issued for rank ${a.rank}` })),
    'lifecycle',
    now,
  );
  await emit(
    tx,
    tenantId,
    issued.map((a) => ({
      event: 'contest.prize_allocated.v1',
      participantId: a.participant_id,
      data: {
        participant_id: a.participant_id,
        contest_id: contestId,
        entry_id: a.entry_id,
        rank: a.rank,
        reward_type: a.reward_type,
        reward_value: Number(a.reward_value),
        reward_name: a.reward_name,
        prize_code: a.prize_code,
      },
    })),
  );
  return issued;
}

/**
 * The safety sweep: finds contests with a due step across tenants and makes
 * sure their job runs now; then does the same for each sandbox tenant whose
 * test clock runs ahead, on that tenant's clock.
 */
export async function enqueueDueContests(db: Database, config: Config): Promise<number> {
  const { rows } = await db.system.query<{ tenant_id: string; id: string }>(store.DUE_CONTESTS_SQL, [clock.now(), SWEEP_BATCH_MAX]);
  for (const tenantId of clock.tenantsWithTestClock()) {
    const due = await db.tenant(tenantId, (tx) => store.dueContestsOfTenant(tx, tenantId, clock.now(tenantId), SWEEP_BATCH_MAX));
    rows.push(...due.map((d) => ({ tenant_id: tenantId, id: d.id })));
  }
  for (const row of rows) {
    await db.tenant(row.tenant_id, (tx) => scheduleAdvance(tx, config, row.tenant_id, row.id, clock.nowMs(row.tenant_id)));
  }
  return rows.length;
}

/**
 * Runs the tenant's due contest steps now, in this call, rather than through
 * the queue (the test clock's advance): each due contest is stepped as far as
 * the tenant's clock allows. Returns how many contests started, completed (final
 * sweep and winners drawn) and had their prizes issued.
 */
export async function advanceDueContests(db: Database, config: Config, tenantId: string): Promise<Record<string, number>> {
  const due = await db.tenant(tenantId, (tx) => store.dueContestsOfTenant(tx, tenantId, clock.now(tenantId), SWEEP_BATCH_MAX));
  const counts = { contests_started: 0, contests_completed: 0, contest_prizes_issued: 0 };
  for (const before of due) {
    await advanceContest(db, config, tenantId, before.id);
    const after = await db.tenant(tenantId, (tx) => store.readContest(tx, tenantId, before.id));
    if (!after) continue;
    if (before.status === 'scheduled' && after.status !== 'scheduled') counts.contests_started += 1;
    if (before.status !== 'completed' && after.status === 'completed') counts.contests_completed += 1;
    if (before.prizes_issued_at === null && after.prizes_issued_at !== null) counts.contest_prizes_issued += 1;
  }
  return counts;
}

// ---------------------------------------------------------------- reviews and decisions

function reviewView(r: store.ReviewRow) {
  return {
    review_id: r.id,
    contest_id: r.contest_id,
    entry_id: r.entry_id,
    participant_id: r.participant_id,
    reasons: r.reasons,
    status: r.status,
    created_at: iso(r.created_at)!,
    decided_at: iso(r.decided_at),
    decided_by: r.decided_by,
    note: r.note,
    score: Number(r.score),
    final_rank: r.final_rank,
  };
}

export async function listReviews(db: Database, tenantId: string, query: { contest_id?: string; status?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listReviews(tx, tenantId, { contestId: query.contest_id, status: query.status, limit: query.limit + 1, after });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      reviews: page.map(reviewView),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: iso(last.created_at), id: last.id }) : null,
    };
  });
}

/**
 * Resolves a held review. Approve: the prize goes back to verification and is
 * issued at once when the verification window has already ended. Disqualify:
 * the entry is disqualified, its prize cancelled and its liability released,
 * and `reward.disqualified` fires. Ranks stay frozen: nobody moves up.
 */
export async function decide(db: Database, tenantId: string, actorId: string, body: FraudDecisionBody) {
  if (!body.review_id && !(body.contest_id && body.entry_id)) {
    throw invalid('name the review with review_id, or with contest_id and entry_id', 'VALIDATION_INVALID_REQUEST');
  }
  return db.tenant(tenantId, async (tx) => {
    const review = await store.findReview(tx, tenantId, { reviewId: body.review_id, contestId: body.contest_id, entryId: body.entry_id }, true);
    if (!review) throw notFound('review');
    if (review.status !== 'pending') throw conflict(`the review was already decided (${review.status})`, 'REVIEW_ALREADY_DECIDED');
    const contest = (await store.readContest(tx, tenantId, review.contest_id, true))!;
    const now = clock.now(tenantId);
    const decision = body.decision === 'approve' ? 'approved' : 'disqualified';
    await store.decideReview(tx, tenantId, review.id, decision, actorId, body.reason ?? null, now);
    let prizeStatus: string | null = null;
    let entryStatus: string;
    if (decision === 'approved') {
      const allocation = await store.setAllocationStatus(tx, tenantId, contest.id, review.participant_id, ['held'], 'pending_verification');
      await store.setEntryStatus(tx, tenantId, [{ contestId: contest.id, participantId: review.participant_id, to: 'winner', reason: 'review approved' }], `admin:${actorId}`, now);
      entryStatus = 'winner';
      prizeStatus = allocation?.status ?? null;
      if (allocation && contest.prizes_issued_at) {
        const issued = await issueVerifiedPrizes(tx, tenantId, contest.id, [review.participant_id], now);
        if (issued.length) {
          prizeStatus = 'issued';
          entryStatus = 'paid';
        }
      }
    } else {
      const allocation = await store.setAllocationStatus(tx, tenantId, contest.id, review.participant_id, ['held', 'pending_verification'], 'cancelled');
      if (allocation) {
        await store.updateContest(tx, tenantId, contest.id, { liabilityAllocated: Number(contest.liability_allocated) - Number(allocation.reward_value) }, now);
      }
      const reason = body.reason ?? `disqualified after review: ${review.reasons.join(',')}`;
      await store.setEntryStatus(tx, tenantId, [{ contestId: contest.id, participantId: review.participant_id, to: 'disqualified', reason }], `admin:${actorId}`, now);
      await emit(tx, tenantId, {
        event: 'reward.disqualified',
        participantId: review.participant_id,
        data: { participant_id: review.participant_id, contest_id: contest.id, entry_id: review.entry_id, reason, review_id: review.id },
      });
      entryStatus = 'disqualified';
      prizeStatus = allocation?.status ?? null;
    }
    const decided = await store.findReview(tx, tenantId, { reviewId: review.id }, false);
    return { review: reviewView(decided!), entry_status: entryStatus as never, prize_status: prizeStatus };
  });
}
