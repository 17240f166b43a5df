import { personal } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';

/** The kinds of program that go through a review, and the id each one takes. */
export const REVIEW_KINDS = ['rule', 'engagement', 'challenge', 'contest', 'segment'] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
export const REVIEW_STATUSES = ['pending', 'approved', 'returned', 'published'] as const;
export const NOTE_LENGTH_MAX = 2000;
export const REVIEW_LIST_LIMIT_MAX = 100;

const Kind = Type.Union(
  REVIEW_KINDS.map((kind) => Type.Literal(kind)),
  { description: 'What is reviewed: an earn rule (`rul_…`), an engagement (uuid), a challenge (uuid), a contest (its own id) or a segment (`seg_…`) whose filter change waits as a draft because live programs use it.' },
);
const Status = Type.Union(
  REVIEW_STATUSES.map((status) => Type.Literal(status)),
  {
    description:
      '`pending` until a publisher decides; `approved` published the item; `returned` sent it back to its author with a note; ' +
      '`published`: the item was published directly (from its own page or route) while the request was pending, by `decided_by` at `decided_at`.',
  },
);
const ReviewId = Type.String({ pattern: '^rev_[0-9a-f]{32}$', examples: ['rev_0f3c2a9e4b7d41c8a6e52d19b8f07c3a'], description: 'Review request id.' });
const Timestamp = Type.String({ format: 'date-time' });

/** The author's latest backtest of a rule (the result of `POST /admin/rules/simulate` they saw), attached to its review request. */
const Backtest = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    events_scanned: Type.Integer({ minimum: 0 }),
    events_matched: Type.Integer({ minimum: 0 }),
    participants: Type.Integer({ minimum: 0 }),
    points: Type.Integer(),
    badges_awarded: Type.Integer({ minimum: 0 }),
    capped_events: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean(),
    budget_exhausted_at: Type.Union([Timestamp, Type.Null()]),
  },
  {
    $id: 'ReviewBacktest',
    title: 'ReviewBacktest',
    additionalProperties: false,
    description: "The author's latest backtest of the rule: the answer of `POST /admin/rules/simulate` as the author saw it, for the publisher to weigh (they may run their own).",
  },
);

const Actor = Type.Object(
  {
    type: Type.Union([Type.Literal('user'), Type.Literal('api_key')], { description: '`user`: a console user (cookie or admin login token); `api_key`: an API key.' }),
    id: Type.String({ description: "The console user's id, or the API key's id." }),
    email: Type.Union([Type.String(personal('staff')), Type.Null()], { description: "The console user's email; null for an API key." }),
  },
  { $id: 'ReviewActor', title: 'ReviewActor' },
);

export const Review = Type.Object(
  {
    id: ReviewId,
    kind: Kind,
    item_id: Type.String(),
    item_name: Type.String({ description: "The item's name (a contest's title) when it was submitted." }),
    item_revision: Type.String({ description: "The item's `updated_at` when it was submitted: approval publishes that draft only (409 `REVIEW_ITEM_CHANGED` once it changed)." }),
    status: Status,
    note: Type.Union([Type.String(), Type.Null()], { description: "The author's note to the publisher." }),
    submitted_by: Type.Ref('ReviewActor'),
    submitted_at: Timestamp,
    decided_by: Type.Union([Type.Ref('ReviewActor'), Type.Null()]),
    decided_at: Type.Union([Timestamp, Type.Null()]),
    decision_note: Type.Union([Type.String(), Type.Null()], { description: "The publisher's note; always given when returning." }),
    backtest: Type.Union([Type.Ref('ReviewBacktest'), Type.Null()], { description: "A rule's backtest, attached by its author when submitting; null otherwise." }),
  },
  { $id: 'Review', title: 'Review' },
);

export const CreateReviewBody = Type.Object(
  {
    kind: Kind,
    id: Type.String({ minLength: 1, maxLength: 64, description: 'The id of the draft to publish.' }),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: NOTE_LENGTH_MAX, description: 'What the publisher should know.' })),
    backtest: Type.Optional(Type.Ref('ReviewBacktest', { description: 'For a rule: the latest backtest the author ran (the answer of `POST /admin/rules/simulate`), shown to the publisher. 400 for other kinds.' })),
  },
  { additionalProperties: false, examples: [{ kind: 'challenge', id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93', note: 'Spring explorer is ready: dates and objectives checked with marketing.' }] },
);
export type CreateReviewBody = Static<typeof CreateReviewBody>;

export const ReturnReviewBody = Type.Object(
  { note: Type.String({ minLength: 1, maxLength: NOTE_LENGTH_MAX, description: 'Why the draft goes back to its author: what to change.' }) },
  { additionalProperties: false },
);

export const ReviewIdParams = Type.Object({ id: ReviewId }, { additionalProperties: false });

export const ListReviewsQuery = Type.Object(
  {
    status: Type.Optional(Status),
    kind: Type.Optional(Kind),
    item_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the requests for this item (give `kind` with it).' })),
    limit: Pagination.limit(REVIEW_LIST_LIMIT_MAX, 20),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);
export type ListReviewsQuery = Static<typeof ListReviewsQuery>;

export const ReviewList = Type.Object({ reviews: Type.Array(Type.Ref('Review')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export { Actor as ReviewActor, Backtest as ReviewBacktest };
