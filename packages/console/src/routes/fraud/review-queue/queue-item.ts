import type { Review } from '../../../hooks/api/fraud';
import type { Conversion } from '../../../hooks/api/referrals';

export type ItemKind = 'contest_entry' | 'referral';
/** One vocabulary for both kinds: a referral's `pending_review`, `converted` and `rejected` read as pending, approved and disqualified. */
export type ItemStatus = 'pending' | 'approved' | 'disqualified';

/** A held contest entry or a suspicious referral conversion, as the queue shows it. */
export interface QueueItem {
  key: string;
  kind: ItemKind;
  id: string;
  contestId: string | null;
  participantId: string;
  subject: string;
  reasons: string[];
  status: ItemStatus;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  reason: string | null;
}

export function fromReview(review: Review): QueueItem {
  return {
    key: `review:${review.review_id}`,
    kind: 'contest_entry',
    id: review.review_id,
    contestId: review.contest_id,
    participantId: review.participant_id,
    subject: `${review.participant_id} · ${review.contest_id}`,
    reasons: review.reasons,
    status: review.status,
    createdAt: review.created_at,
    decidedAt: review.decided_at,
    decidedBy: review.decided_by,
    reason: review.note,
  };
}

const CONVERSION_STATUS: Record<Conversion['status'], ItemStatus> = { pending_review: 'pending', converted: 'approved', rejected: 'disqualified' };
export const CONVERSION_FILTER: Record<ItemStatus, Conversion['status']> = { pending: 'pending_review', approved: 'converted', disqualified: 'rejected' };

export function fromConversion(conversion: Conversion): QueueItem {
  return {
    key: `referral:${conversion.conversion_id}`,
    kind: 'referral',
    id: conversion.conversion_id,
    contestId: null,
    participantId: conversion.referrer_id,
    subject: `${conversion.referrer_id} → ${conversion.referred_participant_id ?? conversion.referred_session_id}`,
    reasons: conversion.signals.map((s) => s.signal),
    status: CONVERSION_STATUS[conversion.status],
    createdAt: conversion.created_at,
    decidedAt: conversion.decided_at,
    decidedBy: conversion.decided_by,
    reason: conversion.decision_note,
  };
}

/**
 * A conversion that went through without being held is not a review: the
 * queue shows only those a fraud control held (they have signals or a decision).
 */
export function wasHeld(conversion: Conversion): boolean {
  return conversion.signals.length > 0 || conversion.decided_at !== null;
}
