import { Type, type Static } from '@sinclair/typebox';

/** The longest range one overview covers, in days (a leap year). */
export const RANGE_DAYS_MAX = 366;
/** The range when neither `from` nor `to` is given: this many days ending today. */
export const RANGE_DAYS_DEFAULT = 30;
/** How many calendar months the expiry forecast lists: the current one and the eleven after it. */
export const FORECAST_MONTHS = 12;

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

/** Money: points times the tenant's point value, rounded to its currency's minor unit; null while no point value is set. */
const Money = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} In the tenant's currency (\`currency\`), rounded to its minor unit; null when no point value is set.` });

export const LiabilityDay = Type.Object(
  {
    date: Type.String({ format: 'date', description: "The calendar day in the tenant's time zone." }),
    outstanding_points: Type.Integer({ description: 'The outstanding points at the end of the day: the outstanding points now less the net ledger change (every entry, expiries included) since the end of that day.' }),
    outstanding_value: Money('`outstanding_points` times the point value now.'),
  },
  { additionalProperties: false },
);

export const OverviewLiability = Type.Object(
  {
    outstanding_points: Count("Points held by participants now: the sum of every participant's available balance."),
    outstanding_value: Money('`outstanding_points` times the point value: the liability in money, now.'),
    participants_with_balance: Count('Participants whose available balance is above zero now.'),
    as_of: Type.String({ format: 'date-time', description: 'When the balances were read. The liability is current, not as at the end of the range.' }),
    history: Type.Array(LiabilityDay, { description: 'The outstanding points at the end of each day of the range, oldest first (valued at the point value now).', maxItems: RANGE_DAYS_MAX }),
  },
  { additionalProperties: false, description: 'The outstanding points liability, now and at the end of each day of the range.' },
);

export const ForecastMonth = Type.Object(
  {
    month: Type.String({ pattern: '^\\d{4}-\\d{2}$', description: "The calendar month in the tenant's time zone (YYYY-MM).", examples: ['2026-12'] }),
    points: Count('Points of open lots (their unspent remainder) whose expiry date falls in the month. The first month also holds lots already due that the expiry run has not yet removed.'),
    value: Money('`points` times the point value.'),
  },
  { additionalProperties: false },
);

export const ExpiryForecast = Type.Object(
  {
    months: Type.Array(ForecastMonth, { description: `The current month and the ${FORECAST_MONTHS - 1} after it, oldest first, with zeros where nothing expires.`, minItems: FORECAST_MONTHS, maxItems: FORECAST_MONTHS }),
    later_points: Count('Points of open lots that expire after the last month listed.'),
    later_value: Money('`later_points` times the point value.'),
    never_points: Count('Points of open lots that never expire (granted while the expiry policy was `none`).'),
  },
  {
    additionalProperties: false,
    description: "What will expire if nobody spends it: the unspent remainder of every open lot, by the month of its expiry date in the tenant's time zone, as the ledger's lots stand now.",
  },
);

export const Breakage = Type.Object(
  {
    points_issued: Count('Points issued in the range (`totals.points_issued`).'),
    points_expired: Count('Points expired in the range (`totals.points_expired`).'),
    rate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: '`points_expired` ÷ `points_issued`, rounded to 4 decimal places (0.125 is 12.5%); null when no point was issued in the range. It may exceed 1 when more expired than was issued (the expired points were issued before the range).',
    }),
    value: Money('`points_expired` times the point value: the money the expired points represent.'),
  },
  { additionalProperties: false, description: 'Breakage over the range: the share of points that expired unspent, measured as the points expired in the range over the points issued in it.' },
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
    currency: Type.String({ description: "The tenant's currency (ISO 4217, as its settings hold it) that the money figures are in.", examples: ['EUR'] }),
    point_value: Type.Union([Type.Number(), Type.Null()], { description: "Money per point in the tenant's currency (points settings `point_value`); null when not set, and every money figure is null." }),
    liability: OverviewLiability,
    expiry_forecast: ExpiryForecast,
    breakage: Breakage,
    top_rules: Type.Array(OverviewRule, { description: 'Up to 10 earn rules by points awarded in the range, most first (ties by rule id).', maxItems: 10 }),
  },
  { $id: 'AnalyticsOverview', title: 'Analytics overview' },
);
export type AnalyticsOverview = Static<typeof AnalyticsOverview>;
