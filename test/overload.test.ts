import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestResponse } from './helper.js';

const CROWD = 200;
const LIMIT = 5;
/** Crowds at most, until one has more than LIMIT in progress at once. */
const CROWD_ROUNDS_MAX = 5;

test(`past SERVICE_IN_FLIGHT_MAX requests in progress a process answers 503 SERVICE_OVERLOADED with Retry-After, and a refused request changes nothing`, async (t) => {
  const svc = await startTestService(t, { config: { SERVICE_IN_FLIGHT_MAX: String(LIMIT) } });
  const tenant = await svc.createTenant();
  // A crowd whose requests happen to arrive one after another on a fast database (CI's PostgreSQL 15 runs without
  // fsync) never has more than the limit in progress: another crowd, of new participants, comes until one overlaps.
  let grants: TestResponse[] = [];
  for (let round = 0; round < CROWD_ROUNDS_MAX && !grants.some((answer) => answer.status === 503); round++) {
    const crowd = await Promise.all(
      Array.from({ length: CROWD }, (_, i) =>
        svc.request('POST', '/api/v1/gamify/points/grant', {
          key: tenant.apiKey,
          body: { participant_id: `crowd-${round}-${i}`, amount: 10, reason: 'crowd', idempotency_key: `crowd-${round}-${i}` },
        }),
      ),
    );
    grants = [...grants, ...crowd];
  }
  const granted = grants.filter((answer) => answer.status === 200);
  const refused = grants.filter((answer) => answer.status === 503);
  assert.equal(granted.length + refused.length, grants.length, `every answer is a grant or a refusal: ${[...new Set(grants.map((answer) => answer.status))]}`);
  assert.ok(refused.length > 0, `${CROWD} grants at once with a limit of ${LIMIT} in progress, ${CROWD_ROUNDS_MAX} times: some refused`);
  assert.ok(granted.length >= LIMIT, 'the first requests are served');
  for (const answer of refused) {
    assert.equal(answer.body.code, 'SERVICE_OVERLOADED');
    assert.match(answer.body.detail, new RegExp(`limit of ${LIMIT} requests in progress; nothing was done`));
    assert.equal(answer.headers.get('retry-after'), '1');
  }
  // Nothing of a refused grant was written: one ledger entry per granted participant, none for the refused.
  const [{ n }] = await svc.sql<{ n: number }>(`SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND participant_id LIKE 'crowd-%'`, [tenant.tenantId]);
  assert.equal(n, granted.length);
  // Health and readiness are never refused, even at the limit; the limit frees as answers finish.
  const [health] = await Promise.all([svc.request('GET', '/healthz'), ...Array.from({ length: CROWD }, () => svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey }))]);
  assert.equal(health.status, 200);
  assert.equal((await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey })).status, 200);
});

test('an open live event stream does not hold a place among the requests in progress', async (t) => {
  const svc = await startTestService(t, { config: { SERVICE_IN_FLIGHT_MAX: '2' } });
  const tenant = await svc.createTenant();
  const session = await svc.createSession(tenant, { participantId: 'listener' });
  const streams = Array.from({ length: 3 }, () => new AbortController());
  t.after(() => streams.forEach((controller) => controller.abort()));
  for (const controller of streams) {
    const response = await fetch(`${svc.baseUrl}/api/v1/public/events/stream?session_id=${session.sessionId}&engagement_id=${session.engagementId}`, { signal: controller.signal });
    assert.equal(response.status, 200, 'a stream opens whatever the others hold');
  }
  // Three streams open with a limit of two requests in progress: other requests are still served.
  const answer = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
  assert.equal(answer.status, 200, answer.text);
});
