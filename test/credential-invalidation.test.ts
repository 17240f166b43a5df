import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { kill, startWorker } from './child-service.js';
import { startTestService, testCluster } from './helper.js';

/**
 * A revoked API key is refused by every API process within 1 s, not only by
 * the one that revoked it: each process keeps key look-ups for 10 s and
 * empties them on the `credentials_changed` notice the revocation sends. A
 * tenant's rate limit changed by the operator travels the same way.
 * The second API process is the compiled service in a child process, on the
 * same database.
 */
const OPERATOR_TOKEN = randomBytes(32).toString('hex');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a key revoked, or a tenant rate limit changed, through one API process applies in another within 1 s', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t, { config: { OPERATOR_TOKEN } });
  const tenant = await svc.createTenant();
  const jwt = await svc.login(tenant);
  const port = await freePort();
  const other = await startWorker(svc.ownerUrl, testCluster().appPassword, {
    env: { SERVICE_ROLE: 'api', HOST: '127.0.0.1', PORT: String(port), RATE_LIMIT_IP_PER_MINUTE: '1000000' },
  });
  t.after(() => kill(other, 'SIGKILL'));
  const otherUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  while (!(await fetch(`${otherUrl}/readyz`).then((r) => r.ok, () => false))) {
    assert.ok(Date.now() < deadline, 'the second API process did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  for (let round = 0; round < 3; round++) {
    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: `revoked ${round}`, scopes: ['admin'] } });
    assert.equal(created.status, 201, created.text);
    const useOnOther = () => fetch(`${otherUrl}/api/v1/tenant`, { headers: { 'x-api-key': created.body.key } });
    // Used on the other process first, so that its look-up is cached there (for 10 s unless a notice empties it).
    assert.equal((await useOnOther()).status, 200);
    assert.equal((await useOnOther()).status, 200);
    const revoked = await svc.request('DELETE', `/api/v1/events/api-keys/${created.body.id}`, { bearer: jwt });
    assert.equal(revoked.status, 200, revoked.text);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 5_000) {
      status = (await useOnOther()).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const elapsed = Date.now() - revokedAt;
    t.diagnostic(`round ${round}: refused by the other process ${elapsed} ms after the revocation answered`);
    assert.equal(status, 401);
    assert.ok(elapsed < 1_000, `refused after ${elapsed} ms`);
  }

  // A tenant's rate limit changed by the operator through one process binds in the other within 1 s (the same notice).
  const limited = await svc.createTenant({ plan: 'starter', requestsPerMinute: null });
  const limitOnOther = async () => (await fetch(`${otherUrl}/api/v1/tenant`, { headers: { 'x-api-key': limited.apiKey } })).headers.get('x-ratelimit-limit');
  assert.equal(await limitOnOther(), '200');
  const changed = await svc.request('PATCH', `/api/v1/operator/tenants/${limited.tenantId}/limits`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    body: { requests_per_minute: 50 },
  });
  assert.equal(changed.status, 200, changed.text);
  const changedAt = Date.now();
  let limit = await limitOnOther();
  while (limit !== '50' && Date.now() - changedAt < 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    limit = await limitOnOther();
  }
  const elapsed = Date.now() - changedAt;
  t.diagnostic(`the other process applied the new rate limit ${elapsed} ms after the change answered`);
  assert.equal(limit, '50');
  assert.ok(elapsed < 1_000, `applied after ${elapsed} ms`);
  // Stopped here: the test database goes with the service's after-hook, which runs before this test's later ones.
  await kill(other, 'SIGKILL');
});
