/**
 * The data of the segments benchmark: one tenant with `participants`
 * participants (default 1,000,000) and what segment filters read, written
 * set-based as the schema owner (one INSERT … SELECT generate_series per
 * table, foreign-key triggers off while it loads; the rows are consistent by
 * construction), never through the API:
 *
 * - participants: created over the last three years, a country (10 codes,
 *   Germany the most common), a locale, an email (and its hash) and a first
 *   name; every 1,000th is a test participant (never a segment member);
 * - points tiers bronze 0 / silver 1,000 / gold 5,000 / platinum 20,000, and
 *   a balance for 90% of the participants: lifetime exponential with mean
 *   3,000, available a uniform share of it, the tier that lifetime reaches;
 * - 8 badge definitions, each held with its own probability (50% … 1%);
 * - custom fields `favourite_store` (string, 60%, one of 50 stores),
 *   `newsletter` (boolean, 80%) and `shoe_size` (number, 30%), none personal;
 * - a daily streak `daily_login`, running for 30% (length 1–60);
 * - `events` processed events (default 4,000,000) over the last 180 days in
 *   time order (as an event store fills): 40% `purchase` with an amount,
 *   40% `login`, 12% `page_view`, 8% `review`; who sent them is skewed
 *   (participant index ~ N·u², so a few are frequent buyers), which makes
 *   "at least 3 purchase in the last 30 days" hold for a realistic minority;
 * - event_names_seen as ingestion keeps it.
 *
 * Then VACUUM ANALYZE, so that plans see the statistics a live database has.
 */
import type pg from 'pg';

export interface SegmentsData {
  participants: number;
  events: number;
  /** Seconds per step, in order. */
  steps: Array<[string, number]>;
  seconds: number;
}

export const TIERS: Array<[string, number]> = [
  ['bronze', 0],
  ['silver', 1000],
  ['gold', 5000],
  ['platinum', 20000],
];
export const BADGES: Array<[string, number]> = [
  ['first_purchase', 0.5],
  ['reviewer', 0.3],
  ['early_bird', 0.2],
  ['socialite', 0.1],
  ['big_spender', 0.05],
  ['ambassador', 0.03],
  ['collector', 0.02],
  ['vip', 0.01],
];
const COUNTRIES = ['DE', 'DE', 'DE', 'AT', 'CH', 'FR', 'NL', 'PL', 'IT', 'ES', 'GB', 'US'];
const EVENT_CHUNK = 1_000_000;

/** Participant ids are `p<i>`, i from 1 to `participants`. */
export const participantId = (i: number) => `p${i}`;

export async function seedSegmentsData(owner: pg.Pool, tenantId: string, options: { participants: number; events: number; log?: (line: string) => void }): Promise<SegmentsData> {
  const { participants: n, events } = options;
  const log = options.log ?? (() => undefined);
  const steps: Array<[string, number]> = [];
  const started = performance.now();
  const client = await owner.connect();
  const step = async (name: string, sql: string, params: unknown[] = []) => {
    const t0 = performance.now();
    await client.query(sql, params);
    const seconds = (performance.now() - t0) / 1000;
    const existing = steps.find(([s]) => s === name);
    if (existing) existing[1] += seconds;
    else steps.push([name, seconds]);
    log(`  ${name}: ${seconds.toFixed(1)} s`);
  };
  try {
    // Foreign-key checks (triggers) off for this session only: millions of look-ups the construction makes unnecessary.
    await client.query(`SET session_replication_role = replica`);
    await client.query(`SET synchronous_commit = off`);
    await client.query(`SET maintenance_work_mem = '256MB'`);

    await step(
      'definitions',
      `WITH tiers AS (
         INSERT INTO points_tiers (tenant_id, code, name, min_lifetime_points, created_at, updated_at)
         SELECT $1, t.code, initcap(t.code), t.min, now(), now() FROM jsonb_to_recordset($2::jsonb) AS t(code text, min bigint)
       ), badges AS (
         INSERT INTO badge_definitions (tenant_id, code, name, created_at, updated_at)
         SELECT $1, b.code, initcap(replace(b.code, '_', ' ')), now(), now() FROM jsonb_to_recordset($3::jsonb) AS b(code text)
       ), fields AS (
         INSERT INTO participant_custom_fields (tenant_id, key, type, personal, created_at, updated_at)
         VALUES ($1, 'favourite_store', 'string', false, now(), now()), ($1, 'newsletter', 'boolean', false, now(), now()), ($1, 'shoe_size', 'number', false, now(), now())
       )
       INSERT INTO streak_definitions (tenant_id, code, name, period, event_name, created_at, updated_at)
       VALUES ($1, 'daily_login', 'Daily login', 'daily', 'login', now(), now())`,
      [tenantId, JSON.stringify(TIERS.map(([code, min]) => ({ code, min }))), JSON.stringify(BADGES.map(([code]) => ({ code })))],
    );

    await step(
      'participants',
      `INSERT INTO participants (tenant_id, participant_id, display_name, created_at, updated_at, email, email_hash, first_name, country_code, locale, test)
       SELECT $1, 'p' || i, 'Player ' || i, c, c, 'user' || i || '@example.com', encode(sha256(convert_to('user' || i || '@example.com', 'UTF8')), 'hex'),
              'Name' || (i % 997), ($3::text[])[1 + (hashint4(i) & 2147483647) % cardinality($3::text[])],
              CASE WHEN i % 5 = 0 THEN 'en' ELSE 'de' END, i % 1000 = 0
       FROM (SELECT i, now() - random() * interval '1095 days' AS c FROM generate_series(1, $2) i OFFSET 0) t`,
      [tenantId, n, COUNTRIES],
    );

    await step(
      'balances',
      `INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, 'p' || i, floor(l * random())::bigint, l, now() - random() * interval '180 days',
              CASE WHEN l >= 20000 THEN 'platinum' WHEN l >= 5000 THEN 'gold' WHEN l >= 1000 THEN 'silver' ELSE 'bronze' END, now()
       FROM (SELECT i, floor(-ln(1 - random()) * 3000)::bigint AS l FROM generate_series(1, $2) i WHERE random() < 0.9 OFFSET 0) x`,
      [tenantId, n],
    );

    await step(
      'badges',
      `INSERT INTO participant_badges (tenant_id, participant_id, badge_code, earned_at, source_kind, source_id)
       SELECT $1, 'p' || i, code, now() - random() * interval '365 days', 'rule', 'rul_bench'
       FROM (SELECT i, b.code, b.p, random() AS r FROM generate_series(1, $2) i, jsonb_to_recordset($3::jsonb) AS b(code text, p float8) OFFSET 0) x
       WHERE r < p`,
      [tenantId, n, JSON.stringify(BADGES.map(([code, p]) => ({ code, p })))],
    );

    await step(
      'custom values',
      `INSERT INTO participant_custom_values (tenant_id, participant_id, key, value, observed_at)
       SELECT $1, 'p' || i, f.key,
              CASE f.key WHEN 'favourite_store' THEN to_jsonb('store-' || (1 + (hashint4(i + 7) & 2147483647) % 50))
                         WHEN 'newsletter' THEN to_jsonb(random() < 0.4)
                         ELSE to_jsonb(36 + (hashint4(i + 13) & 2147483647) % 12) END,
              now()
       FROM (SELECT i, f.key, f.p, random() AS r FROM generate_series(1, $2) i, (VALUES ('favourite_store', 0.6), ('newsletter', 0.8), ('shoe_size', 0.3)) AS f(key, p) OFFSET 0) f
       WHERE f.r < f.p`,
      [tenantId, n],
    );

    await step(
      'streaks',
      `INSERT INTO participant_streaks (tenant_id, participant_id, streak_code, current_length, longest_length, last_period_start, started_at, last_activity_at)
       SELECT $1, 'p' || i, 'daily_login', len, len + (random() * 10)::int, current_date - 1, now() - len * interval '1 day', now() - interval '1 day'
       FROM (SELECT i, 1 + (random() * 59)::int AS len FROM generate_series(1, $2) i WHERE random() < 0.3 OFFSET 0) x`,
      [tenantId, n],
    );

    // Events in time order, in chunks (bounded memory, progress on stderr): event g of `events` occurred at
    // now - 180 days + g/events of 180 days, with a little jitter.
    for (let from = 1; from <= events; from += EVENT_CHUNK) {
      const to = Math.min(events, from + EVENT_CHUNK - 1);
      await step(
        'events',
        `INSERT INTO ingested_events (tenant_id, event_id, event_name, participant_id, properties, occurred_at, received_at, idempotency_key, fact_id, status, attempts, processed_at)
         SELECT $1, 'evt_b' || g, e.name, 'p' || (1 + floor($4::int * u * u))::int, e.props, at, at, 'k' || g, 'fct_b' || g, 'processed', 1, at
         FROM (SELECT g, random() AS r, random() AS u,
                      now() - interval '180 days' + (g::float8 / $5) * interval '180 days' - random() * interval '10 minutes' AS at
               FROM generate_series($2::int, $3::int) g OFFSET 0) x,
              LATERAL (SELECT CASE WHEN x.r < 0.4 THEN 'purchase' WHEN x.r < 0.8 THEN 'login' WHEN x.r < 0.92 THEN 'page_view' ELSE 'review' END AS name,
                              CASE WHEN x.r < 0.4 THEN jsonb_build_object('amount', round((5 + random() * 195)::numeric, 2)) ELSE '{}'::jsonb END AS props) e`,
        [tenantId, from, to, n, events],
      );
    }

    await step(
      'event names seen',
      `INSERT INTO event_names_seen (tenant_id, event_name, events, first_seen_at, last_seen_at)
       SELECT tenant_id, event_name, count(*), min(occurred_at), max(occurred_at) FROM ingested_events WHERE tenant_id = $1 GROUP BY tenant_id, event_name
       ON CONFLICT (tenant_id, event_name) DO UPDATE SET events = excluded.events, first_seen_at = excluded.first_seen_at, last_seen_at = excluded.last_seen_at`,
      [tenantId],
    );
    await client.query(`RESET session_replication_role`);
    await step(
      'vacuum analyze',
      'VACUUM ANALYZE participants, points_balances, points_tiers, participant_badges, badge_definitions, participant_custom_values, participant_custom_fields, participant_streaks, streak_definitions, ingested_events, event_names_seen',
    );
  } finally {
    client.release();
  }
  return { participants: n, events, steps, seconds: (performance.now() - started) / 1000 };
}
