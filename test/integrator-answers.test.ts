import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.ts';
import { loadConfig } from '../src/config.ts';
import { createEngagement } from '../src/modules/engagements/testing.ts';

/**
 * Issue 34, item 10: what an integrator is told. Without PUBLIC_BASE_URL the
 * embed URL is still absolute (the origin the request came to); a malformed
 * PUBLIC_BASE_URL stops the start; the test clock's 403 to a live key names the
 * tenant's test keys, not a new sandbox tenant.
 */
test('embed_url is absolute without PUBLIC_BASE_URL; the test clock tells a live key to use an lk_test_ key', { timeout: 180_000 }, async (t) => {
  const svc = await startTestService(t);
  assert.equal(svc.config.publicBaseUrl, null);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, { site_slug: 'spring' });
  const embed = await svc.request('GET', `/api/v1/public/engagements/${engagement.id}/embed-url`, { key: tenant.apiKey });
  assert.equal(embed.status, 200, embed.text);
  const origin = new URL(svc.baseUrl).origin;
  assert.equal(embed.body.embed_url, `${origin}/embed/${tenant.slug}/spring?engagement_id=${engagement.id}`);
  assert.equal(embed.body.definition_url, `${origin}/api/v1/sites/${tenant.slug}/spring`);

  const refused = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key: tenant.apiKey, body: { seconds: 60 } });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.code, 'SANDBOX_ONLY');
  assert.match(refused.body.detail, /lk_test_/);
  assert.match(refused.body.detail, /"environment": "test"/);
  assert.doesNotMatch(refused.body.detail, /tenant:create/, 'a live key is not sent off to make another tenant');
  // What it says works: the same tenant's test key moves its sandbox's clock.
  const jwt = await svc.login(tenant);
  const testKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'clock', environment: 'test', scopes: ['admin'] } });
  assert.equal(testKey.status, 201, testKey.text);
  assert.match(testKey.body.key, /^lk_test_/);
  const advanced = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key: testKey.body.key, body: { seconds: 60 } });
  assert.equal(advanced.status, 200, advanced.text);

  assert.throws(() => loadConfig({ ...process.env, PUBLIC_BASE_URL: 'loyalty.example.com' }), /PUBLIC_BASE_URL must be an http:\/\/ or https:\/\/ URL/);
  assert.equal(loadConfig({ ...process.env, PUBLIC_BASE_URL: 'https://loyalty.example.com/' }).publicBaseUrl, 'https://loyalty.example.com');
});
