/**
 * Segments benchmark (issue 36): `npm run bench -- segments`
 *
 * Starts its own embedded PostgreSQL (fsync off: it loads millions of rows and
 * measures reads; or BENCH_DATABASE_URL, an owner URL of an empty database),
 * loads one tenant with BENCH_PARTICIPANTS participants (default 1,000,000)
 * and BENCH_EVENTS processed events (default 4,000,000) set-based
 * (bench/segments-data.ts, about two minutes on 2 cores), starts the service
 * in its own process as `npm start` does (API role), and measures in one run:
 *
 * - size: for five filters (a balance threshold; tier and country; a badge;
 *   "at least 3 purchase in the last 30 days"; an `any` group mixing a
 *   balance, a badge, an event count and a custom field), `GET
 *   /admin/segments/{id}/size` and `POST /admin/segments/preview` over HTTP
 *   (wall time at the client: HTTP, authentication, the service's SQL),
 *   beside a plain `count(*)` of the same filter written by hand, run through
 *   the same database layer (the application role, tenant RLS) in the same
 *   round; one unmeasured warm-up round, then BENCH_RUNS rounds (default 5);
 *   median and max; the three sizes must agree;
 * - rule: the added cost per event of a rule condition on a materialized
 *   segment (`participant.segment in [segment]`): BENCH_RULE_EVENTS events
 *   per kind (default 4,000) of members of the segment, processed through
 *   the ingestion's batch processing (`processEventBatchInTx`, batches of
 *   100, the worker's path), a batch of events of a rule with that condition
 *   beside a batch of events of the same rule without it, in pairs of
 *   alternating order; the cost per event is a batch's processing time over
 *   its events (one connection, serial: a cost, not a latency under load),
 *   the added cost the mean of the pairs' differences with its 95% interval;
 *   plus the membership look-up itself (`membershipsInTx` in a transaction
 *   of its own) beside an empty transaction. The segment (tier gold or
 *   platinum, about 17% of the participants) is created materialized, then
 *   refreshed twice: with no change, and after 1% moved across its edge each
 *   way (its entered / left events written).
 *
 * BENCH_PARTS=size,rule selects parts. Loopback only; prints markdown tables
 * and exits. Not part of CI (`.ci/run`).
 */
import os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { freePort, openBenchDatabase, percentile, runBench, startServiceProcess, stopServiceProcess } from './support.js';
import { seedSegmentsData } from './segments-data.js';
import { migrate } from '../src/platform/migrate.js';
import { loadModules } from '../src/platform/module.js';
import { Database, runStatements } from '../src/platform/db.js';
import { clock } from '../src/platform/clock.js';
import { createTenant } from '../src/modules/access/index.js';
import { processEventBatchInTx } from '../src/modules/ingestion/service.js';
import { membershipsInTx } from '../src/modules/segments/index.js';

const PARTICIPANTS = Number(process.env.BENCH_PARTICIPANTS ?? 1_000_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 4_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RULE_EVENTS = Number(process.env.BENCH_RULE_EVENTS ?? 4000);
const BATCH = 100;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'size,rule').split(',').map((p) => p.trim()));
const DAY_MS = 86_400_000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (value: number) => (value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`);
const median = (values: number[]) => percentile(values, 50);

type Filter = { all?: unknown[]; any?: unknown[] };

interface SizeCase {
  name: string;
  filter: Filter;
  /** The same filter as a plain count(*) written by hand: `$1` the tenant, `$2` the window's start, `$3` now (where used). */
  sql: string;
  windowDays?: number;
}

const PURCHASES_30D = (atLeast: number) =>
  `SELECT participant_id FROM ingested_events WHERE tenant_id = $1 AND event_name = 'purchase' AND occurred_at > $2 AND occurred_at <= $3 GROUP BY participant_id HAVING count(*) >= ${atLeast}`;

const SIZE_CASES: SizeCase[] = [
  {
    name: 'available_points gte 5,000',
    filter: { all: [{ fact: 'available_points', operator: 'gte', value: 5000 }] },
    sql: `SELECT count(*) FROM participants p JOIN points_balances b ON b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id
          WHERE p.tenant_id = $1 AND NOT p.test AND b.available >= 5000`,
  },
  {
    name: 'tier in [gold, platinum] and profile.country_code equals DE',
    filter: { all: [{ fact: 'tier', operator: 'in', value: ['gold', 'platinum'] }, { fact: 'profile.country_code', operator: 'equals', value: 'DE' }] },
    sql: `SELECT count(*) FROM participants p JOIN points_balances b ON b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id
          WHERE p.tenant_id = $1 AND NOT p.test AND b.tier_code IN ('gold', 'platinum') AND p.country_code = 'DE'`,
  },
  {
    name: 'badges contains reviewer',
    filter: { all: [{ fact: 'badges', operator: 'contains', value: 'reviewer' }] },
    sql: `SELECT count(*) FROM participant_badges b JOIN participants p ON p.tenant_id = b.tenant_id AND p.participant_id = b.participant_id
          WHERE b.tenant_id = $1 AND b.badge_code = 'reviewer' AND NOT p.test`,
  },
  {
    name: 'event_count purchase, last 30 days, gte 3',
    filter: { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 3 }] },
    sql: `SELECT count(*) FROM (${PURCHASES_30D(3)}) e JOIN participants p ON p.tenant_id = $1 AND p.participant_id = e.participant_id WHERE NOT p.test`,
    windowDays: 30,
  },
  {
    name: 'any of: lifetime_points gte 20,000; badges contains vip; event_count purchase 30 days gte 5; custom.favourite_store equals store-7',
    filter: {
      any: [
        { fact: 'lifetime_points', operator: 'gte', value: 20000 },
        { fact: 'badges', operator: 'contains', value: 'vip' },
        { fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 5 },
        { fact: 'custom.favourite_store', operator: 'equals', value: 'store-7' },
      ],
    },
    sql: `SELECT count(*) FROM (
            SELECT participant_id FROM points_balances WHERE tenant_id = $1 AND lifetime >= 20000
            UNION SELECT participant_id FROM participant_badges WHERE tenant_id = $1 AND badge_code = 'vip'
            UNION ${PURCHASES_30D(5)}
            UNION SELECT participant_id FROM participant_custom_values WHERE tenant_id = $1 AND key = 'favourite_store' AND value = '"store-7"'
          ) m JOIN participants p ON p.tenant_id = $1 AND p.participant_id = m.participant_id WHERE NOT p.test`,
    windowDays: 30,
  },
];

async function main(): Promise<void> {
  const database = await openBenchDatabase('segments', { fast: true });
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, 8);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  owner.on('error', () => undefined);
  const port = await freePort();
  let service: ChildProcess | null = null;
  const out: string[] = [];
  try {
    // The modules' followers, as the service registers them: processing here writes what the worker's does.
    await loadModules();
    // The service starts (and checks the migrations) before the data loads: the schema it finds is the one migrated above.
    service = await startServiceProcess({ ownerUrl, port, role: 'api' });
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-segments-${process.pid}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const tenantId = tenant.tenant_id;
    log(`loading ${PARTICIPANTS.toLocaleString('en')} participants and ${EVENTS.toLocaleString('en')} events`);
    const seeded = await seedSegmentsData(owner, tenantId, { participants: PARTICIPANTS, events: EVENTS, log });
    log(`loaded in ${seeded.seconds.toFixed(0)} s`);
    const baseUrl = `http://127.0.0.1:${port}/api/v1`;
    const call = async <T>(method: string, path: string, body?: unknown, expected = 200): Promise<T> => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': tenant.api_key, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
      return (text ? JSON.parse(text) : null) as T;
    };
    const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
      const t0 = performance.now();
      const result = await fn();
      return [result, performance.now() - t0];
    };

    if (PARTS.has('size')) {
      out.push(
        `\n### Segment size over ${PARTICIPANTS.toLocaleString('en')} participants and ${EVENTS.toLocaleString('en')} events (${RUNS} runs after a warm-up; median / max, wall time at the client)\n`,
        '| filter | members | `GET …/size` | `POST …/preview` (size + sample of 10) | hand-written `count(*)` | size / count(*) (medians) |',
        '|---|---:|---:|---:|---:|---:|',
      );
      for (const c of SIZE_CASES) {
        const segment = await call<{ id: string }>('POST', '/admin/segments', { name: c.name.slice(0, 120), filter: c.filter }, 201);
        const baseline = async () => {
          const now = clock.now(tenantId);
          const params: unknown[] = [tenantId];
          if (c.windowDays) params.push(new Date(now.getTime() - c.windowDays * DAY_MS), now);
          return db.tenant(tenantId, async (tx) => Number((await tx.query(c.sql, params)).rows[0].count));
        };
        const times = { size: [] as number[], preview: [] as number[], sql: [] as number[] };
        const sizes = new Set<number>();
        for (let run = 0; run <= RUNS; run++) {
          const [bySql, sqlMs] = await timed(baseline);
          const [bySize, sizeMs] = await timed(() => call<{ size: number }>('GET', `/admin/segments/${segment.id}/size`));
          const [byPreview, previewMs] = await timed(() => call<{ size: number; sample: unknown[] }>('POST', '/admin/segments/preview', { filter: c.filter }));
          if (byPreview.sample.length !== Math.min(10, byPreview.size)) throw new Error(`${c.name}: a sample of ${byPreview.sample.length} for ${byPreview.size} members`);
          sizes.add(bySql).add(bySize.size).add(byPreview.size);
          log(`${c.name} run ${run}: count(*) ${bySql} in ${ms(sqlMs)}, size ${bySize.size} in ${ms(sizeMs)}, preview ${byPreview.size} in ${ms(previewMs)}`);
          if (run === 0) continue;
          times.sql.push(sqlMs);
          times.size.push(sizeMs);
          times.preview.push(previewMs);
        }
        // The window moves with the clock between runs: an event crossing its start may change a count by one.
        const all = [...sizes];
        if (Math.max(...all) - Math.min(...all) > Math.max(2, Math.max(...all) * 0.001)) throw new Error(`${c.name}: the sizes disagree: ${all.join(', ')}`);
        const mm = (values: number[]) => `${ms(median(values))} / ${ms(Math.max(...values))}`;
        out.push(
          `| ${c.name} | ${all.map((n) => n.toLocaleString('en')).join(' – ')} | ${mm(times.size)} | ${mm(times.preview)} | ${mm(times.sql)} | ${(median(times.size) / median(times.sql)).toFixed(2)} |`,
        );
      }
    }

    if (PARTS.has('rule')) {
      // A materialized segment (about 17% of the participants), created with its baseline, then refreshed twice.
      const [segment, createMs] = await timed(() =>
        call<{ id: string; size: number | null }>('POST', '/admin/segments', { name: 'Gold and platinum', filter: { all: [{ fact: 'tier', operator: 'in', value: ['gold', 'platinum'] }] }, materialized: true }, 201),
      );
      const [first, refreshMs] = await timed(() => call<{ entered: number; left: number; size: number }>('POST', `/admin/segments/${segment.id}/refresh`));
      // 1% of the participants change tier across the segment's edge, both ways: the next refresh emits their entered / left events.
      const moved = Math.round(PARTICIPANTS / 100);
      await owner.query(
        `WITH up AS (SELECT participant_id FROM points_balances WHERE tenant_id = $1 AND tier_code = 'silver' ORDER BY participant_id LIMIT $2),
              down AS (SELECT participant_id FROM points_balances WHERE tenant_id = $1 AND tier_code = 'gold' ORDER BY participant_id LIMIT $2)
         UPDATE points_balances b SET tier_code = CASE b.tier_code WHEN 'silver' THEN 'gold' ELSE 'silver' END
         WHERE b.tenant_id = $1 AND b.participant_id IN (SELECT participant_id FROM up UNION ALL SELECT participant_id FROM down)`,
        [tenantId, moved],
      );
      const [second, refreshAgainMs] = await timed(() => call<{ entered: number; left: number; size: number }>('POST', `/admin/segments/${segment.id}/refresh`));
      log(`materialized segment: created in ${ms(createMs)} (size ${segment.size}), refreshed in ${ms(refreshMs)} (${JSON.stringify(first)}), after ${moved} moved each way in ${ms(refreshAgainMs)} (${JSON.stringify(second)})`);

      const effects = [{ type: 'award_points', points: 1 }];
      const plain = await call<{ status: string }>('POST', '/admin/rules', { name: 'bench plain', event_name: 'bench_plain', status: 'active', effects }, 201);
      // Without the rules' segment condition (not yet in this tree), only the look-up itself is measured below.
      const withSegment = await call<{ status: string }>(
        'POST',
        '/admin/rules',
        { name: 'bench segment', event_name: 'bench_segment', status: 'active', conditions: { all: [{ fact: 'participant.segment', operator: 'in', value: [segment.id] }] }, effects },
        201,
      ).catch((error: unknown) => {
        log(`the rule with a segment condition was refused (${error instanceof Error ? error.message : String(error)}): measuring the look-up only`);
        return null;
      });
      if (plain.status !== 'active' || (withSegment && withSegment.status !== 'active')) throw new Error('the rules were not created active');

      // Members only, so that both rules award and the difference is the condition.
      const { rows: memberRows } = await owner.query(
        `SELECT participant_id FROM segment_members WHERE tenant_id = $1 AND segment_id = $2 ORDER BY md5(participant_id) LIMIT 1000`,
        [tenantId, segment.id],
      );
      const members = memberRows.map((r: { participant_id: string }) => r.participant_id);
      let seq = 0;
      const insertEvents = async (name: string, count: number): Promise<string[]> => {
        const ids = Array.from({ length: count }, () => `evt_rule_${process.pid}_${++seq}`);
        await owner.query(
          `INSERT INTO ingested_events (tenant_id, event_id, event_name, participant_id, properties, occurred_at, received_at, idempotency_key, fact_id)
           SELECT $1, id, $2, ($3::text[])[1 + (n - 1) % cardinality($3::text[])], '{}', now(), now(), id, 'fct_' || id
           FROM unnest($4::text[]) WITH ORDINALITY AS t(id, n)`,
          [tenantId, name, [...members].sort(() => Math.random() - 0.5), ids],
        );
        return ids;
      };
      const processBatch = async (batch: string[]): Promise<number> => {
        const t0 = performance.now();
        const done = await db.tenant(tenantId, async (tx) => {
          const { processed, markers } = await processEventBatchInTx(tx, tenantId, batch);
          await runStatements(tx, markers);
          return processed;
        });
        if (done !== batch.length) throw new Error(`processed ${done} of ${batch.length}`);
        return performance.now() - t0;
      };
      // Warm-up: code compiled, statements prepared, pages cached.
      await processBatch(await insertEvents('bench_plain', BATCH));
      if (withSegment) await processBatch(await insertEvents('bench_segment', BATCH));
      // Pairs of batches, one of each kind, in alternating order: each pair's difference is measured under the same load.
      const pairs = Math.max(1, Math.round(RULE_EVENTS / BATCH));
      const allIds = { plain: withSegment ? await insertEvents('bench_plain', pairs * BATCH) : [], segment: withSegment ? await insertEvents('bench_segment', pairs * BATCH) : [] };
      const perEvent = { plain: [] as number[], segment: [] as number[] };
      for (let pair = 0; withSegment && pair < pairs; pair++) {
        const order: Array<'plain' | 'segment'> = pair % 2 === 0 ? ['plain', 'segment'] : ['segment', 'plain'];
        for (const kind of order) perEvent[kind].push((await processBatch(allIds[kind].slice(pair * BATCH, (pair + 1) * BATCH))) / BATCH);
      }
      // Every event of both kinds awarded its point: the condition held, and nothing else differed.
      const { rows: check } = await owner.query(
        `SELECT event_name, count(*) FILTER (WHERE (outcome->>'points_awarded')::int = 1)::int AS awarded, count(*)::int AS total
         FROM ingested_events WHERE tenant_id = $1 AND event_id = ANY($2::text[]) GROUP BY event_name ORDER BY event_name`,
        [tenantId, [...allIds.plain, ...allIds.segment]],
      );
      for (const row of check as Array<{ event_name: string; awarded: number; total: number }>) {
        if (row.awarded !== row.total) throw new Error(`${row.event_name}: ${row.awarded} of ${row.total} events awarded`);
      }

      // The look-up alone, per event: membershipsInTx in a transaction of its own, beside an empty transaction.
      const lookups = { empty: [] as number[], lookup: [] as number[] };
      for (let i = 0; i < 2000; i++) {
        const participant = members[i % members.length];
        const [, emptyMs] = await timed(() => db.tenant(tenantId, async () => undefined));
        const [found, lookupMs] = await timed(() => db.tenant(tenantId, (tx) => membershipsInTx(tx, tenantId, participant, [segment.id])));
        if (!found.has(segment.id)) throw new Error(`${participant} is not a member`);
        if (i < 100) continue;
        lookups.empty.push(emptyMs);
        lookups.lookup.push(lookupMs);
      }

      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      const differences = perEvent.segment.map((value, i) => value - perEvent.plain[i]);
      const spread = Math.sqrt(differences.reduce((sum, d) => sum + (d - mean(differences)) ** 2, 0) / Math.max(1, differences.length - 1));
      const half = (1.96 * spread) / Math.sqrt(differences.length);
      out.push(
        `\n### A rule condition on a materialized segment (${second.size.toLocaleString('en')} members), per event (${pairs} pairs of batches of ${BATCH} events, one of each kind, in alternating order; one connection)\n`,
        '| measure | figure | baseline | added per event |',
        '|---|---:|---:|---:|',
        withSegment
          ? `| processing (\`processEventBatchInTx\`), a rule with \`participant.segment in [segment]\` (baseline: the same rule without it), mean per event | ${mean(perEvent.segment).toFixed(3)} ms | ${mean(perEvent.plain).toFixed(3)} ms | **${mean(differences).toFixed(3)} ms** (95% CI ${(mean(differences) - half).toFixed(3)} to ${(mean(differences) + half).toFixed(3)}; median of the pairs ${median(differences).toFixed(3)} ms) |`
          : '| processing with the rule condition | not measured: the rules refused `participant.segment` | | |',
        `| \`membershipsInTx\` in its own transaction (baseline: an empty transaction), median / p99 of 1,900 | ${median(lookups.lookup).toFixed(3)} / ${percentile(lookups.lookup, 99).toFixed(3)} ms | ${median(lookups.empty).toFixed(3)} / ${percentile(lookups.empty, 99).toFixed(3)} ms | ${(median(lookups.lookup) - median(lookups.empty)).toFixed(3)} ms |`,
        `| the materialized segment over ${PARTICIPANTS.toLocaleString('en')}: created (with its first refresh) / a refresh with no change / a refresh with ${second.entered.toLocaleString('en')} entered and ${second.left.toLocaleString('en')} left (their events emitted) | ${ms(createMs)} / ${ms(refreshMs)} / ${ms(refreshAgainMs)} | | |`,
      );
    }

    const steps = seeded.steps.map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', ');
    process.stdout.write(
      `\nSegments benchmark (${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end; data loaded in ${seeded.seconds.toFixed(0)} s: ${steps})\n`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    if (service) await stopServiceProcess(service);
    await owner.end();
    await db.close();
    await database.stop();
  }
}

runBench(main);
