import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { grantPoints, type TestResponse, type TestService, type TestTenant } from '../../../test/helper.js';

/**
 * The participants of the segments tests, built through the API with known
 * facts, so that each filter has a known answer:
 *
 * | id    | profile                         | custom                         | points (lifetime / available) | badge | login streak | purchases (days ago) |
 * |-------|---------------------------------|--------------------------------|-------------------------------|-------|--------------|----------------------|
 * | ada   | ada@example.org, DE, Berlin, f  | card AB-1, newsletter, visits 7 | 600 / 500 (gold)             | vip   | 1            | 1, 2, 3, 40          |
 * | bob   | bob@example.net, FR, Paris, m   | newsletter false, visits 2      | 150 / 150 (silver)           | -     | -            | 5                    |
 * | cyd   | (none)                          | (none)                          | 0                            | -     | -            | (none)               |
 * | tess  | test participant (never member) |                                 | 1000                         |       |              |                      |
 */
export const BASE = '/api/v1/admin/segments';
export const DAY_MS = 86_400_000;

export async function ok(response: Promise<TestResponse> | TestResponse, status = 200): Promise<TestResponse> {
  const answer = await response;
  assert.equal(answer.status, status, `${answer.status} ${answer.text}`);
  return answer;
}

export async function seedSegmentFacts(svc: TestService, tenant: TestTenant): Promise<void> {
  const key = tenant.apiKey;
  const post = (path: string, body: unknown, status = 201) => ok(svc.request('POST', path, { key, body }), status);
  for (const [field, type, personal] of [
    ['card', 'string', true],
    ['newsletter', 'boolean', false],
    ['visits', 'number', false],
  ] as const) {
    await post('/api/v1/gamify/admin/participant-fields', { key: field, type, personal });
  }
  await post('/api/v1/admin/points/tiers', { code: 'silver', name: 'Silver', min_lifetime_points: 100 });
  await post('/api/v1/admin/points/tiers', { code: 'gold', name: 'Gold', min_lifetime_points: 500 });
  await post('/api/v1/admin/badges', { code: 'vip', name: 'VIP' });
  await post('/api/v1/admin/streaks', { code: 'login', name: 'Daily login', period: 'daily', event_name: 'login' });
  const profile = (id: string, body: unknown) => ok(svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key, body }));
  await profile('ada', { email: 'ada@example.org', first_name: 'Ada', country_code: 'DE', city: 'Berlin', gender: 'female', date_of_birth: '1990-05-17', custom: { card: 'AB-1', newsletter: true, visits: 7 } });
  await profile('bob', { email: 'bob@example.net', first_name: 'Bob', country_code: 'FR', city: 'Paris', gender: 'male', custom: { newsletter: false, visits: 2 } });
  await profile('cyd', { display_name: 'Cyd' });
  await ok(grantPoints(svc, tenant, 'ada', 600));
  await ok(svc.request('POST', '/api/v1/gamify/points/deduct', { key, body: { participant_id: 'ada', amount: 100, reason: 'spend', idempotency_key: randomUUID() } }));
  await ok(grantPoints(svc, tenant, 'bob', 150));
  await post('/api/v1/admin/badges/vip/award', { participant_id: 'ada' }, 200);
  const event = (participant: string, name: string, daysAgo: number) =>
    ok(
      svc.request('POST', '/api/v1/ingest/events/sync', {
        key,
        body: { event_name: name, participant_id: participant, timestamp: new Date(Date.now() - daysAgo * DAY_MS).toISOString(), idempotency_key: randomUUID() },
      }),
    );
  await event('ada', 'login', 0);
  for (const days of [1, 2, 3, 40]) await event('ada', 'purchase', days);
  await event('bob', 'purchase', 5);
  // A test participant (a draft's preview) with facts that match most filters: never a member.
  await ok(grantPoints(svc, tenant, 'tess', 1000));
  await svc.sql('UPDATE participants SET test = true WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'tess']);
}

/** The member ids of a filter, through the preview (sample) and members of a saved segment. */
export async function previewIds(svc: TestService, key: string, filter: unknown): Promise<string[]> {
  const answer = await ok(svc.request('POST', `${BASE}/preview`, { key, body: { filter } }));
  return (answer.body.sample as Array<{ participant_id: string }>).map((p) => p.participant_id);
}
