import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import type { AuthContext } from '../../platform/auth.js';
import type { Plan } from '../../platform/plans.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { fourEyesRefusal, fourEyesRequiredInTx } from '../../platform/publishing.js';
import type { AuditedChange } from '../../platform/audit.js';
import { publishRuleInTx, ruleForReviewInTx } from '../rules/index.js';
import { engagementForReviewInTx, publishEngagementInTx } from '../engagements/index.js';
import { challengeForReviewInTx, moveChallengeInTx } from '../challenges/index.js';
import { contestForReviewInTx, publishContestInTx } from '../contests/index.js';
import { publishSegmentDraftInTx, SEGMENT_ID_PATTERN, segmentForReviewInTx } from '../segments/index.js';
import * as store from './store.js';
import type { CreateReviewBody, ListReviewsQuery, ReviewKind } from './schemas.js';

/**
 * Review requests: a person without the publishing permission asks for a
 * draft to be published; a publisher approves (the item is published through
 * its own module's publish logic, in the same transaction as the decision) or
 * returns it with a note. See docs/decisions/console-access.md, "Publishing".
 * When the tenant requires four-eyes publishing, a person other than the
 * submitter approves (docs/decisions/console.md, "Four-eyes publishing").
 */

interface ReviewedItem {
  name: string;
  /** Whether the item holds something unpublished (a draft, or an engagement's unpublished changes). */
  draft: boolean;
  /** Changes with every edit of the item (its updated_at). */
  revision: string;
}

interface PublishContext {
  tenantId: string;
  plan: Plan;
  config: Config;
  actorId: string;
}

/** How each kind is found and published: always through the owning module's public surface. */
const PROGRAMS: Record<ReviewKind, { label: string; idPattern: RegExp; find(tx: Tx, tenantId: string, id: string, forUpdate: boolean): Promise<ReviewedItem | null>; publish(tx: Tx, context: PublishContext, id: string): Promise<unknown> }> = {
  rule: {
    label: 'earn rule',
    idPattern: /^rul_[0-9a-f]{32}$/,
    find: ruleForReviewInTx,
    publish: (tx, context, id) => publishRuleInTx(tx, context.tenantId, id),
  },
  engagement: {
    label: 'engagement',
    idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    find: engagementForReviewInTx,
    publish: (tx, context, id) => publishEngagementInTx(tx, context.tenantId, context.plan, id),
  },
  challenge: {
    label: 'challenge',
    idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    find: challengeForReviewInTx,
    publish: (tx, context, id) => moveChallengeInTx(tx, context.tenantId, id, 'publish', context.actorId),
  },
  contest: {
    label: 'contest',
    idPattern: /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/,
    find: contestForReviewInTx,
    publish: (tx, context, id) => publishContestInTx(tx, context.config, context.tenantId, id),
  },
  // A segment used by a live program: the draft of its filter and materialization.
  segment: {
    label: 'segment',
    idPattern: new RegExp(SEGMENT_ID_PATTERN),
    find: segmentForReviewInTx,
    publish: (tx, context, id) => publishSegmentDraftInTx(tx, context.tenantId, id),
  },
};

/** Who acts: a person by user id and email, an API key by its id. */
export function actorOf(auth: AuthContext): store.Actor {
  return auth.user ? { type: 'user', id: auth.user.id, email: auth.user.email } : { type: 'api_key', id: auth.actorId, email: null };
}

function present(row: store.ReviewRow) {
  return {
    id: row.id,
    kind: row.kind,
    item_id: row.item_id,
    item_name: row.item_name,
    item_revision: row.item_revision,
    status: row.status,
    note: row.note,
    submitted_by: { type: row.submitted_by_type, id: row.submitted_by_id, email: row.submitted_by_email },
    submitted_at: row.submitted_at.toISOString(),
    decided_by: row.decided_by_type ? { type: row.decided_by_type, id: row.decided_by_id!, email: row.decided_by_email } : null,
    decided_at: row.decided_at ? row.decided_at.toISOString() : null,
    decision_note: row.decision_note,
    backtest: (row.backtest ?? null) as CreateReviewBody['backtest'] | null,
  };
}

/** An item in plain words for a refusal: `the earn rule “Double points”`, never a bare id. */
function named(kind: ReviewKind, name: string): string {
  return `the ${PROGRAMS[kind].label} “${name}”`;
}

export async function submitReview(db: Database, auth: AuthContext, body: CreateReviewBody) {
  const program = PROGRAMS[body.kind];
  if (!program.idPattern.test(body.id)) throw invalid(`"${body.id}" is not the id of a ${program.label}`, 'VALIDATION_INVALID_VALUE', { errors: [fieldError('/id', 'pattern', `must be the id of a ${program.label}`)] });
  if (body.backtest !== undefined && body.kind !== 'rule') {
    throw invalid('only a rule\'s review request carries a backtest', 'VALIDATION_INVALID_VALUE', { errors: [fieldError('/backtest', 'not_allowed', `a ${program.label} has no backtest`)] });
  }
  return db.tenant(auth.tenantId, (tx) => submitReviewInTx(tx, auth, body));
}

/** Submits a draft for review in the caller's transaction (an experiment's roll-out submits its variant's draft). */
export async function submitReviewInTx(tx: Tx, auth: AuthContext, body: CreateReviewBody) {
  const program = PROGRAMS[body.kind];
  const item = await program.find(tx, auth.tenantId, body.id, true);
  if (!item) throw notFound(`${program.label} "${body.id}"`);
  if (!item.draft) throw conflict(`${named(body.kind, item.name)} has nothing unpublished to review`, 'REVIEW_ITEM_NOT_DRAFT');
  const created = await store.insertReview(tx, auth.tenantId, {
    id: prefixedId('rev'),
    kind: body.kind,
    itemId: body.id,
    itemName: item.name,
    itemRevision: item.revision,
    note: body.note ?? null,
    by: actorOf(auth),
    at: clock.now(),
    backtest: body.backtest ?? null,
  });
  if (!created) throw conflict(`${named(body.kind, item.name)} already has a pending review request`, 'REVIEW_ALREADY_PENDING');
  return present(created);
}

export async function readReview(db: Database, tenantId: string, id: string) {
  const row = await db.tenant(tenantId, (tx) => store.findReview(tx, tenantId, id));
  if (!row) throw notFound(`review request "${id}"`);
  return present(row);
}

export async function listReviews(db: Database, tenantId: string, query: ListReviewsQuery) {
  const after = decodeCursor(query.cursor, { submitted_at: 'timestamp', id: 'text' });
  const rows = await db.tenant(tenantId, (tx) =>
    store.listReviews(tx, tenantId, { status: query.status, kind: query.kind, itemId: query.item_id }, after, query.limit + 1),
  );
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    reviews: page.map(present),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ submitted_at: last.submitted_at.toISOString(), id: last.id }) : null,
  };
}

const DECIDED_WORDS: Record<Exclude<store.ReviewRow['status'], 'pending'>, string> = {
  approved: 'approved',
  returned: 'returned to its author',
  published: 'closed: the item was published directly',
};

async function pendingReviewInTx(tx: Tx, tenantId: string, id: string): Promise<store.ReviewRow> {
  const review = await store.findReview(tx, tenantId, id, true);
  if (!review) throw notFound(`review request "${id}"`);
  if (review.status !== 'pending') {
    throw conflict(`the review request for ${named(review.kind, review.item_name)} was already ${DECIDED_WORDS[review.status]}`, 'REVIEW_ALREADY_DECIDED');
  }
  return review;
}

/**
 * Four-eyes publishing: the approval comes from a person (an API key is an
 * integration, and whoever holds it is unknown) who did not submit the
 * request. A person is the same whether signed in to the console or holding
 * an admin login token: both carry their user id.
 */
function checkSecondPerson(review: store.ReviewRow, approver: store.Actor): void {
  if (approver.type !== 'user') {
    throw fourEyesRefusal(
      'this tenant requires four-eyes publishing (require_four_eyes): an API key may submit a review request but not approve one; another person with the publishing permission approves it in the console or with an admin login token',
    );
  }
  if (review.submitted_by_type === approver.type && review.submitted_by_id === approver.id) {
    throw fourEyesRefusal(
      'this tenant requires four-eyes publishing (require_four_eyes): you submitted this request, so you may not approve it; another person with the publishing permission must approve it (you may still return it)',
    );
  }
}

/**
 * Approves a pending request: the item is published by its own module in this
 * transaction, so the decision and the publication commit together or not at
 * all. Only the draft that was submitted is published.
 */
export async function approveReview(db: Database, config: Config, auth: AuthContext, id: string) {
  return db.tenant(auth.tenantId, async (tx) => {
    const existing = await store.findReview(tx, auth.tenantId, id, true);
    // Published directly while it waited: the request is closed and its item live, which is what an approval asks for.
    if (existing?.status === 'published') return present(existing);
    const review = await pendingReviewInTx(tx, auth.tenantId, id);
    if (await fourEyesRequiredInTx(tx, auth.tenantId)) checkSecondPerson(review, actorOf(auth));
    const program = PROGRAMS[review.kind];
    const item = await program.find(tx, auth.tenantId, review.item_id, true);
    if (!item) throw conflict(`${named(review.kind, review.item_name)} no longer exists; return the request`, 'REVIEW_ITEM_GONE');
    if (!item.draft) {
      // Published by another path that did not close the request (a sandbox promotion): close it now and answer it.
      const closed = await store.decideReview(tx, auth.tenantId, id, { status: 'published', by: actorOf(auth), at: clock.now(), note: null });
      return present(closed!);
    }
    if (item.revision !== review.item_revision) {
      throw conflict(`${named(review.kind, item.name)} changed after it was submitted; return the request so that its author submits the current draft`, 'REVIEW_ITEM_CHANGED');
    }
    await program.publish(tx, { tenantId: auth.tenantId, plan: auth.plan, config, actorId: auth.actorId }, review.item_id);
    const decided = await store.decideReview(tx, auth.tenantId, id, { status: 'approved', by: actorOf(auth), at: clock.now(), note: null });
    return present(decided!);
  });
}

/** The resource names of the audit log (platform/audit.ts) of each reviewed kind. */
const KIND_OF_RESOURCE: Record<string, ReviewKind> = { rules: 'rule', engagements: 'engagement', challenges: 'challenge', contests: 'contest', segments: 'segment' };

/**
 * A change to a reviewed kind committed (platform/audit.ts `onAuditedChange`):
 * when it put the item live while a review request waited for it (a publisher
 * published from the item's page or route), the request is closed as
 * `published`, by whoever published and when, so that nobody approves or
 * returns a request that has nothing left to publish.
 */
export async function closeReviewPublishedDirectly(db: Database, change: AuditedChange): Promise<void> {
  const kind = KIND_OF_RESOURCE[change.resourceType];
  if (!kind || !change.resourceId || change.method === 'DELETE') return;
  await db.tenant(change.tenantId, async (tx) => {
    const review = await store.findPendingReviewOf(tx, change.tenantId, kind, change.resourceId!);
    if (!review) return;
    const item = await PROGRAMS[kind].find(tx, change.tenantId, review.item_id, true);
    if (!item || item.draft) return;
    await store.decideReview(tx, change.tenantId, review.id, { status: 'published', by: change.actor, at: change.at, note: null });
  });
}

/** Returns a pending request to its author with a note; the item stays a draft. */
export async function returnReview(db: Database, auth: AuthContext, id: string, note: string) {
  return db.tenant(auth.tenantId, async (tx) => {
    await pendingReviewInTx(tx, auth.tenantId, id);
    const decided = await store.decideReview(tx, auth.tenantId, id, { status: 'returned', by: actorOf(auth), at: clock.now(), note });
    return present(decided!);
  });
}
