import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import { conflict, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import * as store from './store.js';
import type { FraudDecisionBody } from './schemas.js';
import { iso } from './views.js';
import { issueVerifiedPrizes } from './prizes.js';

/**
 * Manual review of held winners: the list of reviews and the decision that
 * approves a prize or disqualifies the entry.
 */

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
