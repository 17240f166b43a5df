import { Type, type Static } from '@sinclair/typebox';

/** The longest range one overview covers, in days (a leap year). */
export const RANGE_DAYS_MAX = 366;
/** The range when neither `from` nor `to` is given: this many days ending today. */
export const RANGE_DAYS_DEFAULT = 30;

const LocalDate = (description: string) => Type.String({ format: 'date', description, examples: ['2026-03-01'] });

export const OverviewQuery = Type.Object(
  {
    from: Type.Optional(
      LocalDate(`First day of the range (YYYY-MM-DD, a calendar day in the tenant's time zone, inclusive). Default: ${RANGE_DAYS_DEFAULT - 1} days before \`to\`.`),
    ),
    to: Type.Optional(LocalDate("Last day of the range (YYYY-MM-DD, the tenant's time zone, inclusive). Default: today in the tenant's time zone.")),
  },
  { additionalProperties: false },
);
export type OverviewQuery = Static<typeof OverviewQuery>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const dayFields = {
  points_issued: Count('Points granted: the sum of positive ledger entries (awards, bonuses, positive adjustments; rule awards included).'),
  points_redeemed: Count('Points taken out other than by expiry: redemptions and negative adjustments (deducts), as a positive number.'),
  points_expired: Count('Points removed by expiry, as a positive number.'),
  events_ingested: Count("Events in the event store whose own timestamp falls on the day (every stored event, whatever its processing outcome). Events refused at the door (400/422 from the ingestion routes) are never stored and are not counted."),
  events_rejected: Count('Of `events_ingested`, the events whose processing failed for good (status `failed`, see `/events/search?status=failed`), as of now: a retried event that then succeeds leaves this figure.'),
  webhooks_succeeded: Count('Webhook deliveries that ended SUCCEEDED on the day (a replay is a delivery of its own; the test ping is not counted). Kept for good, unlike the delivery log.'),
  webhooks_failed: Count('Webhook deliveries that ended EXHAUSTED on the day (every attempt failed). Cancelled deliveries are not counted.'),
};

export const OverviewDay = Type.Object(
  {
    date: Type.String({ format: 'date', description: "The calendar day in the tenant's time zone." }),
    ...dayFields,
    active_participants: Count('Distinct participants with at least one ledger entry other than an expiry, or one stored event, on the day.'),
  },
  { additionalProperties: false },
);

export const OverviewTotals = Type.Object(
  {
    ...dayFields,
    active_participants: Count('Distinct participants active on at least one day of the range (not the sum of the days: a participant active on several days counts once).'),
  },
  { additionalProperties: false, description: 'The figures of the whole range: sums of the days, except `active_participants`.' },
);

export const OverviewLiability = Type.Object(
  {
    outstanding_points: Count("Points held by participants now: the sum of every participant's available balance."),
    participants_with_balance: Count('Participants whose available balance is above zero now.'),
    as_of: Type.String({ format: 'date-time', description: 'When the balances were read. The liability is current, not as at the end of the range.' }),
  },
  { additionalProperties: false, description: 'The outstanding points liability, now.' },
);

export const OverviewRule = Type.Object(
  {
    rule_id: Type.String({ description: 'The earn rule (`rul_…`).' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'The rule\'s current name; null when the rule has since been deleted.' }),
    points: Count('Points the rule awarded in the range.'),
    events: Count('How many awards the rule made in the range: one per event (or scheduled occurrence) it paid points for.'),
  },
  { additionalProperties: false },
);

export const AnalyticsOverview = Type.Object(
  {
    from: Type.String({ format: 'date', description: 'First day of the range (inclusive).' }),
    to: Type.String({ format: 'date', description: 'Last day of the range (inclusive).' }),
    timezone: Type.String({ description: "The tenant's time zone (IANA name) that the days are cut in." }),
    days: Type.Array(OverviewDay, { description: 'Every day of the range, oldest first, with zeros on days without activity.', maxItems: RANGE_DAYS_MAX }),
    totals: OverviewTotals,
    liability: OverviewLiability,
    top_rules: Type.Array(OverviewRule, { description: 'Up to 10 earn rules by points awarded in the range, most first (ties by rule id).', maxItems: 10 }),
  },
  { $id: 'AnalyticsOverview', title: 'Analytics overview' },
);
export type AnalyticsOverview = Static<typeof AnalyticsOverview>;
