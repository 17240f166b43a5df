import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { startReceiver } from './testing.js';

/**
 * A destination's health and description (issue 35, item 8): a destination
 * whose every delivery fails reads `failing` with its last error, not merely
 * active; a success after failures reads `degraded` while the hour's failures
 * weigh; an inactive one reads `disabled`. Loopback receivers are allowed here
 * through the development settings.
 */
const DEV_CONFIG = { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' };
const BASE = '/api/v1/gamify/webhooks';

test('webhooks: health from the recent attempts, and the description', async (t) => {
  const svc = await startTestService(t, { config: DEV_CONFIG });
  const tenant = await svc.createTenant();
  let failing = true;
  const receiver = await startReceiver((_request, res) => {
    res.statusCode = failing ? 500 : 200;
    res.end(failing ? 'database down' : 'ok');
  });
  t.after(() => receiver.close());
  const call = (method: string, path: string, body?: unknown) => svc.request(method, path, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });

  const created = await call('POST', BASE, { name: 'CRM', url: `${receiver.url}/hooks`, events: ['points.*'], description: 'The CRM team\'s receiver' });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;

  await t.test('a new destination is idle, with its description', async () => {
    assert.equal(created.body.description, "The CRM team's receiver");
    assert.equal(created.body.health.status, 'idle');
    assert.equal(created.body.health.consecutive_failures, 0);
    assert.equal(created.body.health.last_success_at, null);
  });

  await t.test('three failed attempts in a row: failing, with the last error and status, in the list and the detail', async () => {
    for (let i = 0; i < 3; i += 1) {
      const sent = await call('POST', `${BASE}/${id}/test-events`, { event: 'points.awarded.v1' });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.body.status, 'EXHAUSTED');
    }
    const read = await call('GET', `${BASE}/${id}`);
    assert.equal(read.body.active, true);
    const health = read.body.health;
    assert.equal(health.status, 'failing');
    assert.equal(health.consecutive_failures, 3);
    assert.equal(health.last_response_status, 500);
    assert.equal(health.last_error, 'the receiver answered HTTP 500');
    assert.equal(health.last_success_at, null);
    assert.deepEqual(health.last_hour, { attempts: 3, failed: 3 });
    assert.deepEqual(health.last_day, { attempts: 3, failed: 3 });
    const list = await call('GET', BASE);
    assert.equal(list.body.destinations[0].health.status, 'failing');
  });

  await t.test('a success ends the run of failures; the hour\'s failures keep it degraded', async () => {
    failing = false;
    const sent = await call('POST', `${BASE}/${id}/test-events`, { event: 'badge.earned.v1' });
    assert.equal(sent.body.status, 'SUCCEEDED');
    const health = (await call('GET', `${BASE}/${id}`)).body.health;
    assert.equal(health.status, 'degraded');
    assert.equal(health.consecutive_failures, 0);
    assert.ok(health.last_success_at);
    assert.equal(health.last_error, 'the receiver answered HTTP 500', 'the last error stays in view');
    assert.deepEqual(health.last_hour, { attempts: 4, failed: 3 });
  });

  await t.test('the description is edited and cleared; one too long is refused on its field', async () => {
    const edited = await call('PATCH', `${BASE}/${id}`, { description: 'Owned by the CRM team', active: false });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.description, 'Owned by the CRM team');
    assert.equal(edited.body.health.status, 'disabled', 'an inactive destination is disabled, its figures kept');
    assert.equal(edited.body.health.last_hour.attempts, 4);
    const cleared = await call('PATCH', `${BASE}/${id}`, { description: '' });
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.url, `${receiver.url}/hooks`, 'the other fields are kept');
    const tooLong = await call('PATCH', `${BASE}/${id}`, { description: 'x'.repeat(501) });
    assert.equal(tooLong.status, 400, tooLong.text);
    assert.equal(tooLong.body.errors[0].path, '/description');
  });

  await t.test('a URL the forgery rules refuse names the url field', async () => {
    const strict = await startTestService(t);
    const other = await strict.createTenant();
    const made = await strict.request('POST', BASE, { key: other.apiKey, body: { name: 'public', url: 'https://93.184.216.34/hooks', events: ['points.*'] } });
    assert.equal(made.status, 201, made.text);
    const refused = await strict.request('PATCH', `${BASE}/${made.body.id}`, { key: other.apiKey, body: { url: 'https://127.0.0.1/hooks' } });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.errors[0].path, '/url');
  });
});
