import { personal } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';

/** Referral limits and fraud thresholds (defaults; tenants change the thresholds in their settings). */
export const CODE_LENGTH = 10;
/** No 0/O or 1/I, so codes survive being read aloud or typed from print. */
export const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const CODE_PATTERN = /^[A-Z0-9]{10}$/;
export const DEFAULT_VELOCITY_PER_HOUR = 5;
export const DEFAULT_VELOCITY_PER_DAY = 20;
export const REFERRAL_MILESTONES_MAX = 20;
export const CONVERSION_LIST_LIMIT_MAX = 100;

const Signals = {
  email: Type.Optional(Type.String({ ...personal('email'), format: 'email', maxLength: 320, description: 'Stored only as a SHA-256 of the lower-cased address; used for self-referral checks.' })),
  device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A device fingerprint or id; stored hashed.' })),
  ip_address: Type.Optional(Type.Union([Type.String({ format: 'ipv4' }), Type.String({ format: 'ipv6' })], { description: 'The person\'s IP address, when the caller knows it.' })),
};

export const GenerateBody = Type.Object(
  { participant_id: ParticipantId, campaign_id: Type.String({ format: 'uuid' }), ...Signals },
  { additionalProperties: false },
);
export type GenerateBody = Static<typeof GenerateBody>;

export const ReferralCode = Type.Object(
  {
    code: Type.String(),
    referral_url: Type.String(),
    participant_id: Type.String(),
    campaign_id: Type.String({ format: 'uuid' }),
    created_at: Type.String({ format: 'date-time' }),
    created: Type.Boolean({ description: 'False when the participant already had a code for the campaign and that code is returned.' }),
  },
  { $id: 'ReferralCode', title: 'Referral code' },
);

export const CodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const ValidateResponse = Type.Object({
  valid: Type.Literal(true),
  code: Type.String(),
  referrer_id: Type.String(),
  campaign_id: Type.String({ format: 'uuid' }),
});

export const ConvertBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 64 }),
    referred_session_id: Type.String({ minLength: 1, maxLength: 200, description: 'The referred person\'s session; one conversion per session. A `ses_…` session of the tenant also names the referred participant.' }),
    referred_participant_id: Type.Optional(ParticipantId),
    ...Signals,
  },
  {
    additionalProperties: false,
    examples: [{ code: 'K7Q2M9X4TA', referred_session_id: 'signup-7f3a91c2', referred_participant_id: 'user_2087', email: 'grace@example.com', device_id: 'fp_9d41c07e3b2a', ip_address: '198.51.100.23' }],
  },
);
export type ConvertBody = Static<typeof ConvertBody>;

export const ConvertResponse = Type.Object({
  converted: Type.Boolean({ description: 'True when the conversion counts now; false while it is held for review.' }),
  status: Type.Union([Type.Literal('converted'), Type.Literal('pending_review')]),
  referrer_id: Type.String(),
  conversion_id: Type.String({ format: 'uuid' }),
});

export const StatsParams = Type.Object({ participant_id: ParticipantId }, { additionalProperties: false });

export const Stats = Type.Object(
  {
    participant_id: Type.String(),
    total_referrals: Type.Integer({ description: 'Every conversion recorded for the participant\'s codes, whatever its status.' }),
    conversions: Type.Integer({ description: 'Conversions that count (status converted).' }),
    pending: Type.Integer({ description: 'Conversions held for review.' }),
    rejected: Type.Integer(),
    referral_code: Type.Union([Type.String(), Type.Null()], { description: 'The participant\'s most recent code.' }),
    codes: Type.Array(Type.Object({ code: Type.String(), campaign_id: Type.String(), referral_url: Type.String(), created_at: Type.String() })),
  },
  { $id: 'ReferralStats', title: 'Referral stats' },
);

const Milestone = Type.Object(
  {
    conversions: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    badge_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' })),
    points: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  },
  { additionalProperties: false },
);

export const SettingsBody = Type.Object(
  {
    velocity_per_hour: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: `Conversions per referrer per hour before new ones go to review (default ${DEFAULT_VELOCITY_PER_HOUR}).` })),
    velocity_per_day: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: `Conversions per referrer per 24 hours before new ones go to review (default ${DEFAULT_VELOCITY_PER_DAY}).` })),
    review_same_device: Type.Optional(Type.Boolean({ description: 'Hold conversions from the referrer\'s own device (default true).' })),
    review_same_ip: Type.Optional(Type.Boolean({ description: 'Hold conversions from the referrer\'s IP address (default true).' })),
    milestones: Type.Optional(Type.Array(Milestone, { maxItems: REFERRAL_MILESTONES_MAX, description: 'What a referrer receives on reaching a number of conversions (a badge, points, or both).' })),
  },
  { additionalProperties: false },
);
export type SettingsBody = Static<typeof SettingsBody>;

export const Settings = Type.Object({
  velocity_per_hour: Type.Integer(),
  velocity_per_day: Type.Integer(),
  review_same_device: Type.Boolean(),
  review_same_ip: Type.Boolean(),
  milestones: Type.Array(Milestone),
});

export const Conversion = Type.Object(
  {
    conversion_id: Type.String({ format: 'uuid' }),
    code: Type.String(),
    referrer_id: Type.String(),
    campaign_id: Type.String(),
    referred_session_id: Type.String(),
    referred_participant_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('converted'), Type.Literal('pending_review'), Type.Literal('rejected')]),
    signals: Type.Array(Type.Object({ signal: Type.String(), observed: Type.Unknown(), threshold: Type.Unknown() })),
    created_at: Type.String({ format: 'date-time' }),
    decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    decided_by: Type.Union([Type.String(), Type.Null()]),
    decision_note: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ReferralConversion', title: 'Referral conversion' },
);

export const ConversionList = Type.Object({ conversions: Type.Array(Type.Ref('ReferralConversion')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const ConversionListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('converted'), Type.Literal('pending_review'), Type.Literal('rejected')])),
    limit: Type.Integer({ minimum: 1, maximum: CONVERSION_LIST_LIMIT_MAX, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const ConversionParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
export const DecisionBody = Type.Object(
  { note: Type.Optional(Type.String({ minLength: 10, maxLength: 1000, description: 'Why (at least 10 characters, as for a contest fraud decision): kept with the decision.' })) },
  { additionalProperties: false },
);
