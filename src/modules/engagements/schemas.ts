import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { ParticipantId } from '../participants/index.js';
import { SegmentId } from '../segments/index.js';

/**
 * Engagement definitions. Structure is checked here; cross-field rules
 * (unique ids, option ranges, gate condition syntax, referenced rewards) are
 * checked in service.ts, where the detail can say exactly what is wrong.
 */
export const LIMITS = {
  screensMax: 100,
  componentsMax: 500,
  activitiesMax: 50,
  segmentsMin: 2,
  segmentsMax: 24,
  questionsMax: 50,
  optionsMin: 2,
  optionsMax: 10,
  actionsMax: 10,
  conditionsMax: 20,
  urlPatternsMax: 50,
  attributeRulesMax: 20,
  embedOriginsMax: 20,
  maxAttemptsMax: 1_000_000,
  cooldownSecondsMax: 365 * 24 * 3600,
  pointsMax: 1_000_000_000,
} as const;

/**
 * Who an engagement or an activity is for: the members of one segment of the tenant (`seg_…`), or
 * everyone (null or omitted). A participant outside it gets 403 `NOT_IN_SEGMENT` (issue 36).
 */
const TargetSegment = (what: 'engagement' | 'activity') =>
  Type.Union([SegmentId, Type.Null()], {
    description:
      what === 'engagement'
        ? 'Only members of this segment get a session (`POST /sessions`: 403 `NOT_IN_SEGMENT` for others) and take part; null or omitted: everyone. Preview sessions (test participants) are not held to it. Not with `allow_anonymous_sessions` (a new anonymous visitor is in no segment).'
        : 'Only members of this segment may attempt the activity (403 `NOT_IN_SEGMENT` for others); null or omitted: everyone with a session.',
  });

export const LocalId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '1 to 64 letters, digits, `_` or `-`; unique within the engagement.' });
export const SiteSlug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'The site part of `/sites/{tenantSlug}/{siteSlug}`.' });
const FreeObject = Type.Object({}, { additionalProperties: true });
/** Who may frame the runtime page: the Content-Security-Policy `frame-ancestors` of `/embed/{tenantSlug}/{siteSlug}`. */
export const EmbedOrigins = Type.Array(
  Type.String({ pattern: '^https?://(\\*\\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?$', maxLength: 255, examples: ['https://shop.example.com'] }),
  {
    minItems: 1,
    maxItems: LIMITS.embedOriginsMax,
    description:
      'Origins of the host pages that may embed the runtime page in an iframe (`https://shop.example.com`, `https://*.example.com`); the page\'s CSP `frame-ancestors`, beside the service\'s own origin (the console\'s live preview). Omitted: any page may embed it.',
  },
);
const When = Type.Union([Type.Literal('always'), Type.Literal('passed'), Type.Literal('failed')], {
  description: 'When the action runs: `always` (default), only when the quiz is `passed`, or only when it is `failed`. A spin always counts as passed.',
});

export const Action = Type.Object(
  {
    type: Type.Union([Type.Literal('award_points'), Type.Literal('award_reward'), Type.Literal('grant_badge')]),
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.pointsMax, description: 'award_points: points to grant.' })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'award_points: ledger reason (default `activity_completed`).' })),
    reward_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'award_reward: the catalogue reward to claim.' })),
    badge_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'grant_badge: the badge to grant.' })),
    when: Type.Optional(When),
  },
  { additionalProperties: false },
);
export type Action = Static<typeof Action>;

export const Segment = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 100 }),
    prize_type: Type.Union([Type.Literal('points'), Type.Literal('reward'), Type.Literal('badge'), Type.Literal('none')]),
    prize_value: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.pointsMax, description: 'prize_type points: the points won.' })),
    reward_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'prize_type reward: the catalogue reward won.' })),
    badge_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'prize_type badge: the badge won.' })),
    weight: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Relative chance; server-side secret, never served to the public.' }),
    inventory: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000, description: 'How often this segment can be won in total; omitted is unlimited. Secret.' })),
    color: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);
export type Segment = Static<typeof Segment>;

export const Question = Type.Object(
  {
    id: LocalId,
    text: Type.String({ minLength: 1, maxLength: 1000 }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { minItems: LIMITS.optionsMin, maxItems: LIMITS.optionsMax }),
    correct_option: Type.Integer({ minimum: 0, description: 'Index into options. Secret: never served to the public.' }),
  },
  { additionalProperties: false },
);

export const Activity = Type.Object(
  {
    id: LocalId,
    type: Type.Union([Type.Literal('spin_wheel'), Type.Literal('quiz')]),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.maxAttemptsMax, description: 'Attempts per participant (default 1).' })),
    cooldown_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.cooldownSecondsMax, description: 'Wait between attempts (default 0).' })),
    segments: Type.Optional(Type.Array(Segment, { minItems: LIMITS.segmentsMin, maxItems: LIMITS.segmentsMax, description: 'spin_wheel only.' })),
    questions: Type.Optional(Type.Array(Question, { minItems: 1, maxItems: LIMITS.questionsMax, description: 'quiz only.' })),
    pass_percent: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'quiz only: score (percent correct) needed to pass; default 70.' })),
    on_completion: Type.Optional(Type.Array(Action, { maxItems: LIMITS.actionsMax })),
    segment_id: Type.Optional(TargetSegment('activity')),
  },
  { additionalProperties: false },
);
export type Activity = Static<typeof Activity>;

export const Screen = Type.Object(
  {
    id: LocalId,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    components: Type.Optional(Type.Array(FreeObject, { maxItems: LIMITS.componentsMax })),
    gate: Type.Optional(
      Type.Object(
        {
          conditions: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
            minItems: 1,
            maxItems: LIMITS.conditionsMax,
            description:
              'All must hold (AND): `activity_completed`, `activity_completed:<activity_id>`, `<activity_type>_completed` (e.g. `quiz_completed`), `min_points_<N>`, `badge_earned:<code>`, `screen_visited:<screen_id>`, `in_segment:<segment_id>` (a member of that segment of the tenant).',
          }),
          unlock_hint: Type.Optional(Type.String({ maxLength: 500, description: 'Shown while locked; generated from the remaining conditions when omitted.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const AttributeRule = Type.Object(
  {
    attribute: Type.String({ minLength: 1, maxLength: 100 }),
    operator: Type.Union(['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'].map((o) => Type.Literal(o))),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type AttributeRule = Static<typeof AttributeRule>;

export const TriggerRules = Type.Object(
  {
    url_patterns: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: LIMITS.urlPatternsMax,
        description: 'Glob patterns (`*` matches any run of characters) matched against the full page URL; any one must match. Omitted or empty matches every URL.',
      }),
    ),
    starts_at: Type.Optional(Type.String({ format: 'date-time' })),
    ends_at: Type.Optional(Type.String({ format: 'date-time' })),
    frequency_cap: Type.Optional(
      Type.Object(
        {
          max_impressions: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          period: Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('lifetime')]),
        },
        { additionalProperties: false },
      ),
    ),
    participant_attributes: Type.Optional(Type.Array(AttributeRule, { maxItems: LIMITS.attributeRulesMax, description: 'All must hold.' })),
  },
  { additionalProperties: false },
);
export type TriggerRules = Static<typeof TriggerRules>;

const definitionFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  site_slug: SiteSlug,
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  screens: Type.Optional(Type.Array(Screen, { maxItems: LIMITS.screensMax })),
  components: Type.Optional(Type.Array(FreeObject, { maxItems: LIMITS.componentsMax })),
  canvas: Type.Optional(FreeObject),
  activities: Type.Optional(Type.Array(Activity, { maxItems: LIMITS.activitiesMax })),
  trigger_rules: Type.Optional(TriggerRules),
  allow_anonymous_sessions: Type.Optional(
    Type.Boolean({ description: 'When true, visitors of the published site may get an anonymous session from `POST /sites/{tenantSlug}/{siteSlug}/sessions`.' }),
  ),
  embed_origins: Type.Optional(EmbedOrigins),
  segment_id: Type.Optional(TargetSegment('engagement')),
};

/** A spin-to-win page: the example of `POST /admin/engagements`, one wheel and a prize room behind it. */
const ENGAGEMENT_EXAMPLE = {
  name: 'Spring spin-to-win',
  site_slug: 'spring-spin',
  description: 'Spin once a day during the spring sale; every spin earns points.',
  screens: [
    { id: 'welcome', name: 'Welcome', components: [{ type: 'heading', text: 'Spin the spring wheel' }] },
    { id: 'prize-room', name: 'Prize room', components: [], gate: { conditions: ['activity_completed:spring-wheel'], unlock_hint: 'Spin the wheel to open the prize room' } },
  ],
  components: [],
  canvas: { background: '#FFF8E7' },
  activities: [
    {
      id: 'spring-wheel',
      type: 'spin_wheel',
      name: 'Spring wheel',
      max_attempts: 3,
      cooldown_seconds: 86_400,
      segments: [
        { label: '50 points', prize_type: 'points', prize_value: 50, weight: 6, color: '#F5A623' },
        { label: '200 points', prize_type: 'points', prize_value: 200, weight: 1, inventory: 500, color: '#7ED321' },
        { label: 'Try again tomorrow', prize_type: 'none', weight: 3, color: '#9B9B9B' },
      ],
      on_completion: [{ type: 'award_points', amount: 10, reason: 'spring_wheel_spun', when: 'always' }],
    },
  ],
  trigger_rules: { url_patterns: ['https://shop.example.com/*'], starts_at: '2026-11-26T09:30:00.000Z', ends_at: '2027-12-31T23:00:00.000Z', frequency_cap: { max_impressions: 3, period: 'day' } },
  allow_anonymous_sessions: true,
  embed_origins: ['https://shop.example.com'],
};

export const CreateEngagementBody = Type.Object(definitionFields, { additionalProperties: false, examples: [ENGAGEMENT_EXAMPLE] });
export type CreateEngagementBody = Static<typeof CreateEngagementBody>;

export const UpdateEngagementBody = Type.Partial(Type.Object(definitionFields), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Top-level fields to replace; omitted fields are kept.',
  examples: [{ name: 'Spring spin-to-win (extended)', description: 'The spring sale runs a week longer: spin once a day until it ends.', trigger_rules: { frequency_cap: { max_impressions: 5, period: 'day' } } }],
});
export type UpdateEngagementBody = Static<typeof UpdateEngagementBody>;

export const EngagementDefinition = Type.Object({
  name: Type.String(),
  site_slug: Type.String(),
  description: Type.Optional(Type.String()),
  screens: Type.Array(Screen),
  components: Type.Array(FreeObject),
  canvas: FreeObject,
  activities: Type.Array(Activity),
  trigger_rules: TriggerRules,
  allow_anonymous_sessions: Type.Boolean(),
  embed_origins: Type.Optional(EmbedOrigins),
  segment_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The segment the engagement is for (its members only), or null for everyone.' })),
});
export type EngagementDefinition = Static<typeof EngagementDefinition>;

export const EngagementRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Union([Type.Literal('draft'), Type.Literal('published')]),
    version: Type.Integer({ description: 'Increases with every change of the draft.' }),
    published_version: Type.Union([Type.Integer(), Type.Null()], { description: 'The draft version the live snapshot was taken from.' }),
    has_unpublished_changes: Type.Boolean(),
    published_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    ...EngagementDefinition.properties,
  },
  { $id: 'Engagement', title: 'Engagement' },
);

export const EngagementIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const ListEngagementsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published')])),
    site_slug: Type.Optional(SiteSlug),
    limit: Pagination.limit(100, 20),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const EngagementList = Type.Object({
  engagements: Type.Array(Type.Ref('Engagement')),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

// The public, published definition: only what a browser may see.
const PublicSegment = Type.Object({
  index: Type.Integer(),
  label: Type.String(),
  prize_type: Type.String(),
  color: Type.Optional(Type.String()),
});
const PublicQuestion = Type.Object({ id: Type.String(), text: Type.String(), options: Type.Array(Type.String()) });
const PublicActivity = Type.Object({
  id: Type.String(),
  type: Type.String(),
  name: Type.Optional(Type.String()),
  max_attempts: Type.Integer(),
  cooldown_seconds: Type.Integer(),
  segments: Type.Optional(Type.Array(PublicSegment)),
  questions: Type.Optional(Type.Array(PublicQuestion)),
  pass_percent: Type.Optional(Type.Integer()),
});
const PublicScreen = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  components: Type.Array(FreeObject),
  gated: Type.Boolean({ description: 'Whether the screen has a gate; check it with `POST /runtime/gates/check`.' }),
});

export const PublicEngagement = Type.Object({
  engagement_id: Type.String({ format: 'uuid' }),
  tenant_slug: Type.String(),
  site_slug: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  version: Type.Integer(),
  published_at: Type.String({ format: 'date-time' }),
  screens: Type.Array(PublicScreen),
  components: Type.Array(FreeObject),
  canvas: FreeObject,
  activities: Type.Array(PublicActivity),
  allow_anonymous_sessions: Type.Boolean(),
});

export const SiteParams = Type.Object({ tenantSlug: Type.String({ maxLength: 63 }), siteSlug: Type.String({ maxLength: 63 }) });

export const EmbedUrlResponse = Type.Object({
  engagement_id: Type.String({ format: 'uuid' }),
  status: Type.Union([Type.Literal('draft'), Type.Literal('published')]),
  embed_url: Type.String({ description: 'The runtime page that renders the engagement; put it in an iframe.' }),
  definition_url: Type.String({ description: 'The public definition the runtime loads.' }),
  tenant_slug: Type.String(),
  site_slug: Type.String(),
});

export const EligibilityQuery = Type.Object(
  {
    engagement_id: Type.String({ format: 'uuid' }),
    url: Type.Optional(Type.String({ maxLength: 2000, description: 'The page the visitor is on; matched against `url_patterns`.' })),
    participant_id: Type.Optional(ParticipantId),
    visitor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'An anonymous visitor id, when there is no participant id.' })),
    attributes: Type.Optional(
      Type.String({ maxLength: 4000, description: 'A JSON object of the visitor\'s attributes, matched against `participant_attributes` (for example `{"country":"DE"}`).' }),
    ),
  },
  { additionalProperties: false },
);

const RuleOutcome = Type.Object({
  rule: Type.Union(['published', 'url', 'time_window', 'frequency_cap', 'participant_attributes', 'segment'].map((r) => Type.Literal(r))),
  passed: Type.Boolean(),
  detail: Type.String(),
});

export const EligibilityResponse = Type.Object({
  engagement_id: Type.String({ format: 'uuid' }),
  eligible: Type.Boolean(),
  rules: Type.Array(RuleOutcome, { description: 'Every rule that applies, with whether it passed. `segment` (an engagement for a segment): whether `participant_id` is a member.' }),
  impressions_used: Type.Integer({ description: 'Impressions of this visitor in the current frequency period.' }),
  max_impressions: Type.Union([Type.Integer(), Type.Null()]),
  evaluated_at: Type.String({ format: 'date-time' }),
});

export const ImpressionBody = Type.Object(
  {
    engagement_id: Type.String({ format: 'uuid' }),
    participant_id: Type.Optional(ParticipantId),
    visitor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    url: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false, examples: [{ engagement_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93', participant_id: 'user_1042', url: 'https://shop.example.com/checkout' }] },
);

export const ImpressionResponse = Type.Object({
  impression_id: Type.String({ format: 'uuid' }),
  engagement_id: Type.String({ format: 'uuid' }),
  visitor_id: Type.String(),
  recorded_at: Type.String({ format: 'date-time' }),
  impressions_used: Type.Integer(),
  max_impressions: Type.Union([Type.Integer(), Type.Null()]),
});

export const AnonymousSessionBody = Type.Object(
  { display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);

export const AnonymousSessionResponse = Type.Object({
  session_id: Type.String(),
  participant_id: Type.String(),
  engagement_id: Type.String({ format: 'uuid' }),
  expires_at: Type.String({ format: 'date-time' }),
});

// ---------------------------------------------------------------------------
// Previews of a draft (preview.ts).

export const PreviewEngagement = Type.Composite(
  [
    Type.Omit(PublicEngagement, ['published_at']),
    Type.Object({
      preview: Type.Literal(true, { description: 'Always true: this is the draft, shown to a test participant; nothing it does counts.' }),
      updated_at: Type.String({ format: 'date-time', description: 'When the draft was last saved.' }),
    }),
  ],
  { description: 'The draft of an engagement as the runtime sees it in a preview, without server secrets (like `getSite`).' },
);

export const PreviewQuery = Type.Object({
  session_id: Type.String({ description: 'The preview session (`startEngagementPreview`).' }),
  engagement_id: Type.String({ format: 'uuid', description: 'The engagement the preview session was issued for.' }),
}, { additionalProperties: false });

export const PreviewResponse = Type.Object({
  engagement_id: Type.String({ format: 'uuid' }),
  version: Type.Integer({ description: 'The draft version previewed.' }),
  participant_id: Type.String({ description: 'The test participant: flagged `test`, left out of lists and figures; its completions award nothing real.' }),
  session_id: Type.String({ description: 'A session of the test participant for this engagement only (the preview token): pass it to the runtime page as `#session=`.' }),
  expires_at: Type.String({ format: 'date-time' }),
  tenant_slug: Type.String(),
  site_slug: Type.String({ description: "The draft's site." }),
  preview_url: Type.String({ description: 'The runtime page of the draft, relative to the service: append `#session=<session_id>`.' }),
});

export const PreviewResetResponse = Type.Object({
  engagement_id: Type.String({ format: 'uuid' }),
  deleted_test_participants: Type.Integer({ description: "Test participants of this engagement's previews deleted, with their attempts and sessions." }),
});
