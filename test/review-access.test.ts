import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestResponse, type TestService } from './helper.js';

/**
 * Review findings 5, 8 and 9 of issue 32 (docs/decisions/console-access.md),
 * each through HTTP: the last-owner guard under concurrent demotions, admin
 * login tokens ended by the changes that must end them, and the slowdown of
 * password guessing per account and per address.
 */
const PASSWORD = 'correct horse battery';

interface Person {
  email: string;
  cookie: string;
  csrf: string;
  userId: string;
}

function cookieOf(response: TestResponse): string {
  const match = /lk_console=([^;]*)/.exec(response.headers.get('set-cookie') ?? '');
  assert.ok(match, `no lk_console cookie in ${response.headers.get('set-cookie')}`);
  return `lk_console=${match[1]}`;
}

async function signIn(svc: TestService, email: string, password = PASSWORD): Promise<Person> {
  const response = await svc.request('POST', '/api/v1/console/session', { body: { email, password } });
  assert.equal(response.status, 200, response.text);
  return { email, cookie: cookieOf(response), csrf: response.body.csrf_token, userId: response.body.user.id };
}

function as(person: Person): { headers: Record<string, string> } {
  return { headers: { cookie: person.cookie, 'x-csrf-token': person.csrf } };
}

/** Invites a user with the role and accepts the invitation with PASSWORD; returns their email. */
async function invite(svc: TestService, owner: Person, email: string, role: string): Promise<string> {
  const invited = await svc.request('POST', '/api/v1/admin/users', { ...as(owner), body: { email, role } });
  assert.equal(invited.status, 201, invited.text);
  const token = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
  const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: PASSWORD } });
  assert.equal(accepted.status, 200, accepted.text);
  return email;
}

// ---- finding 5: the last-owner guard -------------------------------------------------

const OWNERS = 6;
const ROUNDS = 5;

test('owners demoting and disabling each other all at once always leave an active owner; the refused get 409 LAST_OWNER', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const first = await signIn(svc, tenant.adminEmail, tenant.adminPassword);
  const emails = [tenant.adminEmail];
  for (let i = 1; i < OWNERS; i++) emails.push(await invite(svc, first, `owner${i}@${tenant.slug}.example`, 'owner'));

  for (let round = 0; round < ROUNDS; round++) {
    await svc.sql(`UPDATE admin_users SET role = 'owner', status = 'active' WHERE tenant_id = $1`, [tenant.tenantId]);
    const owners: Person[] = [];
    for (const email of emails) owners.push(await signIn(svc, email, email === tenant.adminEmail ? tenant.adminPassword : PASSWORD));
    // Every owner demotes (or, every third pair, disables) every other owner, all requests in flight together.
    const changes = owners.flatMap((actor, i) =>
      owners.flatMap((target, j) => (i === j ? [] : [{ actor, target, body: (i + j) % 3 === 0 ? { status: 'disabled' } : { role: 'marketer' } }])),
    );
    const started = Date.now();
    const answers = await Promise.all(changes.map(({ actor, target, body }) => svc.request('PATCH', `/api/v1/admin/users/${target.userId}`, { ...as(actor), body })));
    const statuses = new Map<string, number>();
    for (const answer of answers) {
      const key = answer.status === 200 ? '200' : `${answer.status} ${answer.body.code}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      // Refused: the guard (409 LAST_OWNER), or an actor who already lost the owner role (403) or was disabled (401).
      assert.ok(
        answer.status === 200 ||
          (answer.status === 409 && answer.body.code === 'LAST_OWNER') ||
          (answer.status === 403 && answer.body.code === 'AUTH_FORBIDDEN') ||
          (answer.status === 401 && answer.body.code === 'AUTH_UNAUTHENTICATED'),
        `round ${round + 1}: ${answer.status} ${answer.text}`,
      );
    }
    const [{ owners: left }] = await svc.sql<{ owners: number }>(
      `SELECT count(*)::int AS owners FROM admin_users WHERE tenant_id = $1 AND role = 'owner' AND status = 'active'`,
      [tenant.tenantId],
    );
    t.diagnostic(`round ${round + 1}: ${JSON.stringify(Object.fromEntries(statuses))} in ${Date.now() - started} ms; active owners left: ${left}`);
    assert.ok(left >= 1, `round ${round + 1}: no active owner is left (${JSON.stringify(Object.fromEntries(statuses))})`);
  }

  // Removal, last: every owner removes every other at once.
  await svc.sql(`UPDATE admin_users SET role = 'owner', status = 'active' WHERE tenant_id = $1`, [tenant.tenantId]);
  const owners: Person[] = [];
  for (const email of emails) owners.push(await signIn(svc, email, email === tenant.adminEmail ? tenant.adminPassword : PASSWORD));
  const removals = await Promise.all(
    owners.flatMap((actor) => owners.filter((target) => target !== actor).map((target) => svc.request('DELETE', `/api/v1/admin/users/${target.userId}`, as(actor)))),
  );
  for (const answer of removals) {
    // A removed actor's sign-in is gone with them (401); a target already removed is 404.
    assert.ok(
      [204, 401, 404].includes(answer.status) || (answer.status === 409 && answer.body.code === 'LAST_OWNER'),
      `removal: ${answer.status} ${answer.text}`,
    );
  }
  const [{ owners: left }] = await svc.sql<{ owners: number }>(
    `SELECT count(*)::int AS owners FROM admin_users WHERE tenant_id = $1 AND role = 'owner' AND status = 'active'`,
    [tenant.tenantId],
  );
  assert.equal(left, 1, 'removals leave exactly one active owner');
});
