import type { Tx } from '../../platform/db.js';
import { AppError, ruleViolation } from '../../platform/errors.js';
import type { OutboxEvent } from '../../platform/outbox.js';
import type { Action, PublishedActivity, Segment } from '../engagements/index.js';
import { claimRewardInTx, previewClaimInTx } from '../rewards/index.js';
import { grantEachInTx } from '../points/index.js';
import { awardBadgeInTx } from '../badges/index.js';
import type { Result, Session } from './attempts.js';
import { draw } from './outcomes.js';

/**
 * A completion's actions (its on-completion actions and a wheel's prize):
 * points, rewards and badges, what each gave, and a preview's version of
 * each, which writes nothing real.
 */

export interface Executed {
  type: 'award_points' | 'award_reward' | 'grant_badge';
  source: 'on_completion' | 'prize';
  points_awarded?: number;
  new_balance?: number;
  reward_claimed?: {
    reward_id: string;
    claim_id: string;
    code: string | null;
    display_type: string;
    title: string;
    type: string;
    expires_at: string | null;
    image_url?: string | null;
  };
  badge_code?: string;
  badge_name?: string;
  badge_image_url?: string | null;
  awarded?: boolean;
}

export interface ActionContext {
  tx: Tx;
  session: Session;
  activity: PublishedActivity;
  attemptId: string;
  events: OutboxEvent[];
  /** The trace context of the call's request (CompletionCall.traceparent). */
  traceparent?: string | null;
}

/**
 * A preview of a draft (src/modules/engagements/preview.ts) shows what the action would give and
 * writes nothing real: no ledger entry, no reward claim, code or stock, no badge.
 */
async function previewAction(ctx: ActionContext, action: Action, source: Executed['source']): Promise<Executed> {
  switch (action.type) {
    case 'award_points':
      return { type: 'award_points', source, points_awarded: action.amount! };
    case 'award_reward': {
      const claim = await previewClaimInTx(ctx.tx, ctx.session.tenantId, action.reward_id!);
      const { reward_id, claim_id, code, display_type, name: title, type, expires_at, image_url } = claim;
      return { type: 'award_reward', source, reward_claimed: { reward_id, claim_id, code, display_type, title, type, expires_at, image_url } };
    }
    case 'grant_badge':
      return { type: 'grant_badge', source, badge_code: action.badge_code!, badge_name: action.badge_code!, badge_image_url: null, awarded: true };
  }
}

/** An action to run and where it comes from. */
export interface Planned {
  action: Action;
  source: Executed['source'];
}

/** The points actions of one or several completions in one round trip (`grantEachInTx`), in their order. */
export async function grantPoints(lists: ReadonlyArray<{ ctx: ActionContext; list: Planned[] }>): Promise<Executed[][]> {
  const { tx, session, events } = lists[0].ctx;
  const inputs = lists.flatMap(({ ctx: { session: own, activity, attemptId, traceparent }, list }) =>
    list.map(({ action, source }) => ({
      traceparent,
      participantId: own.participantId,
      amount: action.amount!,
      reason: action.reason ?? (source === 'prize' ? `${activity.type}_prize` : `${activity.type}_completed`),
      type: 'award' as const,
      source: { kind: 'activity' as const, id: attemptId },
      activityId: activity.activityId,
      engagementId: own.engagementId,
    })),
  );
  const granted = await grantEachInTx(tx, session.tenantId, inputs, events);
  let next = 0;
  return lists.map(({ list }) => list.map(({ source }) => {
    const grant = granted[next++];
    return { type: 'award_points' as const, source, points_awarded: grant.delta, new_balance: grant.available };
  }));
}

/** Runs the actions in order; consecutive points actions travel together (`grantPoints`). */
export async function runActions(ctx: ActionContext, list: Planned[]): Promise<Executed[]> {
  const executed: Executed[] = [];
  for (let i = 0; i < list.length; ) {
    let end = i;
    while (!ctx.activity.preview && end < list.length && list[end].action.type === 'award_points') end++;
    if (end > i) {
      executed.push(...(await grantPoints([{ ctx, list: list.slice(i, end) }]))[0]);
      i = end;
    } else {
      executed.push(await runAction(ctx, list[i].action, list[i].source));
      i += 1;
    }
  }
  return executed;
}

async function runAction(ctx: ActionContext, action: Action, source: Executed['source']): Promise<Executed> {
  const { tx, session, activity, attemptId } = ctx;
  if (activity.preview) return previewAction(ctx, action, source);
  switch (action.type) {
    case 'award_points':
      return (await grantPoints([{ ctx, list: [{ action, source }] }]))[0][0];
    case 'award_reward': {
      const claim = await claimRewardInTx(
        tx,
        session.tenantId,
        { rewardId: action.reward_id!, participantId: session.participantId, engagementId: session.engagementId, activityId: activity.activityId, attemptId },
        ctx.events,
      );
      return {
        type: 'award_reward',
        source,
        reward_claimed: {
          reward_id: claim.reward_id,
          claim_id: claim.claim_id,
          code: claim.code,
          display_type: claim.display_type,
          title: claim.name,
          type: claim.type,
          expires_at: claim.expires_at,
          image_url: claim.image_url,
        },
      };
    }
    case 'grant_badge': {
      const granted = await awardBadgeInTx(tx, session.tenantId, { participantId: session.participantId, badgeCode: action.badge_code!, source: { kind: 'activity', id: attemptId } });
      return { type: 'grant_badge', source, badge_code: action.badge_code!, badge_name: granted.name, badge_image_url: granted.imageUrl, awarded: granted.awarded };
    }
  }
}

function prizeAction(segment: Segment): Action | null {
  switch (segment.prize_type) {
    case 'points':
      return { type: 'award_points', amount: segment.prize_value! };
    case 'reward':
      return { type: 'award_reward', reward_id: segment.reward_id! };
    case 'badge':
      return { type: 'grant_badge', badge_code: segment.badge_code! };
    default:
      return null;
  }
}

const PRIZE_GONE_CODES = new Set(['REWARD_OUT_OF_STOCK', 'REWARD_EXPIRED', 'REWARD_UNAVAILABLE']);

/**
 * The wheel's prize. If the drawn reward ran out between validation and
 * completion, the draw is repeated among the prizes still available (the
 * claim runs inside a savepoint, so a failed one leaves nothing behind; only
 * a reward's claim can fail that way, so points and badges need none, and
 * save its two round trips).
 */
export async function runPrize(ctx: ActionContext, result: Result): Promise<{ executed: Executed | null; planned: Planned | null; result: Result }> {
  const segments = ctx.activity.config.segments ?? [];
  const excluded = new Set<number>();
  for (let round = 0; round <= segments.length; round++) {
    const action = prizeAction(segments[result.segment_index as number]);
    if (!action) return { executed: null, planned: null, result };
    // Points and badges cannot run out: they run with the on-completion actions (runActions).
    if (action.type !== 'award_reward') return { executed: null, planned: { action, source: 'prize' }, result };
    await ctx.tx.query('SAVEPOINT prize');
    const eventsBefore = ctx.events.length;
    try {
      const executed = await runAction(ctx, action, 'prize');
      await ctx.tx.query('RELEASE SAVEPOINT prize');
      return { executed, planned: null, result };
    } catch (error) {
      if (!(error instanceof AppError) || !PRIZE_GONE_CODES.has(error.code)) throw error;
      await ctx.tx.query('ROLLBACK TO SAVEPOINT prize');
      // The events of the rolled-back prize go with it.
      ctx.events.length = eventsBefore;
      excluded.add(result.segment_index as number);
      result = await draw(ctx.tx, ctx.session, ctx.activity, excluded);
    }
  }
  throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
}
