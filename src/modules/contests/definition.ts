import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { publishingRequired } from '../../platform/publishing.js';
import * as store from './store.js';
import type { PrizeTierDefinition } from './store.js';
import type { CreateContestBody, UpdateContestBody, FraudRules } from './schemas.js';
import { adminView, iso } from './views.js';
import { scheduleAdvance } from './lifecycle.js';

/**
 * A contest's definition and publication: creating, changing (what may change
 * in each state), publishing a draft, and the administrators' reads.
 */

function checkDefinition(d: { starts_at: Date; ends_at: Date; prize_structure: PrizeTierDefinition[] }): void {
  if (d.ends_at.getTime() <= d.starts_at.getTime()) {
    throw invalid(`ends_at (${d.ends_at.toISOString()}) must be after starts_at (${d.starts_at.toISOString()})`, 'CONTEST_WINDOW_INVALID', {
      errors: [fieldError('/ends_at', 'after_start', 'must be after the start')],
    });
  }
  // Each tier keeps its index in the request, so a refusal names the tier as it was sent.
  const tiers = d.prize_structure.map((tier, index) => ({ tier, index })).sort((a, b) => a.tier.rank_from - b.tier.rank_from);
  for (const { tier, index } of tiers) {
    if (tier.rank_to < tier.rank_from) {
      throw invalid(`prize_structure: rank_to (${tier.rank_to}) is below rank_from (${tier.rank_from})`, 'CONTEST_PRIZES_INVALID', {
        errors: [fieldError(`/prize_structure/${index}/rank_to`, 'below_rank_from', `must not be below the tier's first rank (${tier.rank_from})`)],
      });
    }
  }
  for (let i = 1; i < tiers.length; i++) {
    const [before, after] = [tiers[i - 1].tier, tiers[i].tier];
    if (after.rank_from <= before.rank_to) {
      throw invalid(`prize_structure: ranks ${before.rank_from}–${before.rank_to} and ${after.rank_from}–${after.rank_to} overlap`, 'CONTEST_PRIZES_OVERLAP', {
        errors: [fieldError(`/prize_structure/${tiers[i].index}/rank_from`, 'overlap', `overlaps ranks ${before.rank_from}–${before.rank_to} of another tier`)],
      });
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
