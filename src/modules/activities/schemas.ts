import { Type, type Static } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';

export const LIMITS = { answersMax: 50, factPropertiesBytesMax: 8_192 } as const;

const SessionFields = {
  session_id: Type.String({ description: 'The participant session.' }),
  engagement_id: Type.String({ format: 'uuid', description: 'The engagement the session was issued for.' }),
};

export const ActivityType = Type.Union([Type.Literal('spin_wheel'), Type.Literal('quiz')]);

export const AttemptId = Type.String({
  pattern: '^[A-Za-z0-9_-]{8,64}$',
  description:
    'The attempt to act on: the `attempt_id` returned by validate, or an id of the client\'s own choosing (8 to 64 letters, digits, `_`, `-`). Completing the same attempt again returns the first response with `duplicate: true`.',
});

export const Answer = Type.Object(
  { question_id: Type.String({ minLength: 1, maxLength: 64 }), selected_option: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

export const Payload = Type.Object(
  {
    spin_result_index: Type.Optional(Type.Integer({ minimum: 0, description: 'spin_wheel: the segment the client shows; never trusted (see the response `valid`).' })),
    answers: Type.Optional(Type.Array(Answer, { maxItems: LIMITS.answersMax, description: 'quiz: one answer per question.' })),
    score: Type.Optional(Type.Number({ description: 'quiz: the client\'s own score; ignored, the server recomputes it.' })),
    passed: Type.Optional(Type.Boolean({ description: 'quiz: the client\'s own verdict; ignored, the server recomputes it.' })),
  },
  { additionalProperties: false },
);
export type Payload = Static<typeof Payload>;

export const ActivityParams = Type.Object({ activityId: Type.String({ minLength: 1, maxLength: 64 }) });

export const ValidateBody = Type.Object(
  { ...SessionFields, activity_type: ActivityType, payload: Type.Optional(Payload), attempt_id: Type.Optional(AttemptId) },
  {
    additionalProperties: false,
    examples: [
      { session_id: 'ses_9c41d7e2a0b34f58', engagement_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93', activity_type: 'spin_wheel', payload: { spin_result_index: 0 }, attempt_id: 'spin-2026-11-26-a1' },
    ],
  },
);
export type ValidateBody = Static<typeof ValidateBody>;

export const CompleteBody = ValidateBody;
export type CompleteBody = ValidateBody;

export const ActivityResult = Type.Object({
  segment_index: Type.Optional(Type.Integer()),
  prize_label: Type.Optional(Type.String()),
  prize_type: Type.Optional(Type.String()),
  score: Type.Optional(Type.Number({ description: 'quiz: percent of questions answered correctly (0 to 100).' })),
  passed: Type.Optional(Type.Boolean()),
  correct_answers: Type.Optional(Type.Integer()),
  total_questions: Type.Optional(Type.Integer()),
  answered: Type.Optional(Type.Integer()),
});

export const ValidateResponse = Type.Object({
  valid: Type.Boolean({
    description: 'spin_wheel: false when the client sent a `spin_result_index` other than the server\'s draw (the server\'s `result` stands). quiz: whether the answers are well-formed.',
  }),
  result: ActivityResult,
  attempt_id: Type.Union([Type.String(), Type.Null()], { description: 'spin_wheel: the attempt holding the draw; pass it to complete-with-actions. quiz: null.' }),
});

export const ExecutedAction = Type.Object({
  type: Type.Union([Type.Literal('award_points'), Type.Literal('award_reward'), Type.Literal('grant_badge')]),
  points_awarded: Type.Optional(Type.Integer()),
  new_balance: Type.Optional(Type.Integer()),
  reward_claimed: Type.Optional(
    Type.Object({
      reward_id: Type.String(),
      claim_id: Type.String(),
      code: Type.Union([Type.String(), Type.Null()]),
      display_type: Type.String(),
      title: Type.String(),
      type: Type.String(),
      expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      image_url: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "The reward's picture, to show with its title." })),
    }),
  ),
  badge_code: Type.Optional(Type.String()),
  badge_name: Type.Optional(Type.String({ description: 'grant_badge: the badge\'s name, to show instead of its code.' })),
  badge_image_url: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'grant_badge: the badge\'s image, when it has one.' })),
  awarded: Type.Optional(Type.Boolean({ description: 'grant_badge: false when the participant already held the badge.' })),
  source: Type.Union([Type.Literal('on_completion'), Type.Literal('prize')], { description: 'A configured on-completion action, or the spin wheel segment\'s prize.' }),
});

export const CompleteResponse = Type.Object({
  success: Type.Boolean(),
  actions_executed: Type.Array(ExecutedAction),
  fact_id: Type.String(),
  attempt_id: Type.String(),
  activity_type: ActivityType,
  result: ActivityResult,
  duplicate: Type.Boolean({ description: 'True when this attempt had already been completed; nothing was applied again.' }),
});

export const EligibilityQuery = Type.Object({ ...SessionFields }, { additionalProperties: false });

export const ActivityEligibility = Type.Object({
  eligible: Type.Boolean(),
  attempts_used: Type.Integer(),
  max_attempts: Type.Integer(),
  cooldown_remaining_seconds: Type.Integer(),
  open_attempt_id: Type.Union([Type.String(), Type.Null()], { description: 'A validated attempt waiting for completion; it does not count again.' }),
});

export const EmitFactBody = Type.Object(
  {
    ...SessionFields,
    fact_name: Type.String({ pattern: '^[a-z0-9][a-z0-9_.:-]{0,99}$', description: 'What happened, for example `video_watched`.' }),
    properties: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Free-form attributes (at most 8 KB as JSON).' })),
    trigger_challenge_evaluation: Type.Optional(Type.Boolean({ description: 'When true, challenge progress is updated from this fact in the same transaction. Default false.' })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Or the `Idempotency-Key` header (both: they must agree). A repeat inside 24 hours returns the first answer with duplicate: true.' })),
  },
  { additionalProperties: false },
);
export type EmitFactBody = Static<typeof EmitFactBody>;

export const EmitFactResponse = Type.Object({
  fact_id: Type.String(),
  fact_name: Type.String(),
  participant_id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  challenge_evaluation_triggered: Type.Boolean(),
  duplicate: Type.Boolean(),
});

export const ReportCompletionBody = Type.Object(
  {
    participant_id: ParticipantId,
    engagement_id: Type.String({ format: 'uuid', description: 'The published engagement that holds the activity.' }),
    completion_id: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "Your system's id for this completion, unique in the tenant: reporting it again changes nothing (200, duplicate: true).",
    }),
    occurred_at: Type.Optional(Type.String({ format: 'date-time', description: "When the participant completed the activity; default now (the tenant's clock). At most 5 minutes in the future." })),
    properties: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Free-form attributes kept on the fact (at most 8 KB as JSON).' })),
  },
  { additionalProperties: false },
);
export type ReportCompletionBody = Static<typeof ReportCompletionBody>;

export const ReportCompletionResponse = Type.Object({
  fact_id: Type.String({ description: 'The `activity_completed` (or `quiz_completed`) fact recorded for the completion; derived from completion_id.' }),
  completion_id: Type.String(),
  activity_id: Type.String(),
  activity_type: ActivityType,
  engagement_id: Type.String({ format: 'uuid' }),
  participant_id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  attempts_used: Type.Integer({ description: "The participant's attempts of the activity after this completion (runtime attempts and reported completions together)." }),
  max_attempts: Type.Integer(),
  duplicate: Type.Boolean({ description: 'True when this completion_id was already reported; nothing was applied again.' }),
});
