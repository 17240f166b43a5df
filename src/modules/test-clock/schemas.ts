import { Type, type Static } from '@sinclair/typebox';

/** One advance moves the clock at most this far (a year and a month: past any yearly expiry). */
export const ADVANCE_SECONDS_MAX = 400 * 24 * 60 * 60;
/** The tenant's clock never runs more than this far ahead of real time (five years). */
export const OFFSET_SECONDS_MAX = 5 * 366 * 24 * 60 * 60;

export const TestClock = Type.Object(
  {
    tenant_id: Type.String({ format: 'uuid' }),
    environment: Type.Literal('sandbox'),
    now: Type.String({ format: 'date-time', description: "The tenant's now: what its contests, challenges and points expiry read." }),
    real_now: Type.String({ format: 'date-time', description: "The service's own now, which live tenants see." }),
    offset_seconds: Type.Number({ minimum: 0, description: "How far the tenant's clock runs ahead of real time (0: real time). The clock keeps running from there." }),
    advanced_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When (real time) the clock was last advanced; null on real time.' }),
  },
  { $id: 'TestClock', title: 'TestClock' },
);
export type TestClock = Static<typeof TestClock>;

export const AdvanceBody = Type.Object(
  {
    seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: ADVANCE_SECONDS_MAX, description: `Move the clock forward by this many seconds (at most ${ADVANCE_SECONDS_MAX}, 400 days).` })),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: `Move the clock forward to this moment (after the tenant's now, at most 400 days ahead of it). Give \`seconds\` or \`to\`, not both.` }),
    ),
  },
  { additionalProperties: false, examples: [{ seconds: 86_400 }] },
);
export type AdvanceBody = Static<typeof AdvanceBody>;

export const AdvanceResponse = Type.Object({
  clock: Type.Ref('TestClock'),
  previous_now: Type.String({ format: 'date-time', description: "The tenant's now before the advance." }),
  ran: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description:
      'The scheduled work that became due and was run during the call, as counts: `contests_started`, `contests_completed` (final sweep, winners drawn), ' +
      '`contest_prizes_issued` (verification hold over, prize codes issued), `challenge_status_moves`, `points_lots_expired`, `points_expired`, `points_expiry_reminders`. New names may appear.',
  }),
});
