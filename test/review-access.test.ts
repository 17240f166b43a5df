import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestResponse, type TestService } from './helper.js';
import { acceptInvitation, asPerson, signInConsole, CONSOLE_TEST_PASSWORD, type ConsolePerson } from './console-people.js';

/** An error answer without what differs per request and per operation (its request id, the operation's reference link). */
const answerOf = ({ request_id: _id, doc_url: _doc, ...answer }: Record<string, unknown>) => answer;

/**
 * Review findings 5, 8 and 9 of issue 32 (docs/decisions/console-access.md),
 * each through HTTP: the last-owner guard under concurrent demotions, admin
 * login tokens ended by the changes that must end them, and the slowdown of
 * password guessing per account and per address.
 */
const PASSWORD = CONSOLE_TEST_PASSWORD;

// ---- finding 5: the last-owner guard -------------------------------------------------

const OWNERS = 6;
const ROUNDS = 5;

test('owners demoting and disabling each other all at once always leave an active owner; the refused get 409 LAST_OWNER', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const first = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const emails = [tenant.adminEmail];
  for (let i = 1; i < OWNERS; i++) emails.push(await acceptInvitation(svc, first, `owner${i}@${tenant.slug}.example`, 'owner'));

  for (let round = 0; round < ROUNDS; round++) {
    await svc.sql(`UPDATE admin_users SET role = 'owner', status = 'active' WHERE tenant_id = $1`, [tenant.tenantId]);
    const owners: ConsolePerson[] = [];
    for (const email of emails) owners.push(await signInConsole(svc, email, email === tenant.adminEmail ? tenant.adminPassword : PASSWORD));
    // Every owner demotes (or, every third pair, disables) every other owner, all requests in flight together.
    const changes = owners.flatMap((actor, i) =>
      owners.flatMap((target, j) => (i === j ? [] : [{ actor, target, body: (i + j) % 3 === 0 ? { status: 'disabled' } : { role: 'marketer' } }])),
    );
    const started = Date.now();
    const answers = await Promise.all(changes.map(({ actor, target, body }) => svc.request('PATCH', `/api/v1/admin/users/${target.userId}`, { ...asPerson(actor), body })));
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
  const owners: ConsolePerson[] = [];
  for (const email of emails) owners.push(await signInConsole(svc, email, email === tenant.adminEmail ? tenant.adminPassword : PASSWORD));
  const removals = await Promise.all(
    owners.flatMap((actor) => owners.filter((target) => target !== actor).map((target) => svc.request('DELETE', `/api/v1/admin/users/${target.userId}`, asPerson(actor)))),
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

// ---- finding 8: admin login tokens end with the changes that must end them ------------

async function login(svc: TestService, email: string, password = PASSWORD): Promise<TestResponse> {
  return svc.request('POST', '/api/v1/auth/login', { body: { email, password } });
}

async function tokenOf(svc: TestService, email: string, password = PASSWORD): Promise<string> {
  const response = await login(svc, email, password);
  assert.equal(response.status, 200, response.text);
  return response.body.token;
}

async function assertTokenWorks(svc: TestService, token: string, message: string): Promise<void> {
  const answer = await svc.request('GET', '/api/v1/console/session', { bearer: token });
  assert.equal(answer.status, 200, `${message}: ${answer.text}`);
}

async function assertTokenEnded(svc: TestService, token: string, message: string): Promise<void> {
  const answer = await svc.request('GET', '/api/v1/console/session', { bearer: token });
  assert.equal(answer.status, 401, `${message}: ${answer.text}`);
  assert.equal(answer.body.code, 'AUTH_UNAUTHENTICATED');
  assert.match(answer.body.detail, /ended.*log in again/, message);
}

test('admin login tokens end on a password change, a sign-out, a logout, a role change and a disable; disabled and invited users get no token', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const wrongPassword = await login(svc, tenant.adminEmail, 'not the password at all');
  assert.equal(wrongPassword.status, 401);

  await t.test('a password change ends every token of the user, the one that changed it too', async () => {
    const email = await acceptInvitation(svc, owner, `password@${tenant.slug}.example`, 'marketer');
    const before = await tokenOf(svc, email);
    const other = await tokenOf(svc, email);
    await assertTokenWorks(svc, before, 'before the change');
    const person = await signInConsole(svc, email, PASSWORD);
    const changed = await svc.request('POST', '/api/v1/console/password', { ...asPerson(person), body: { current_password: PASSWORD, new_password: 'a brand new passphrase' } });
    assert.equal(changed.status, 204, changed.text);
    await assertTokenEnded(svc, before, 'after a password change in the console');
    await assertTokenEnded(svc, other, 'another token after the password change');
    // The console sign-in that changed it goes on; a new token works.
    assert.equal((await svc.request('GET', '/api/v1/console/session', asPerson(person))).status, 200);
    const fresh = await tokenOf(svc, email, 'a brand new passphrase');
    await assertTokenWorks(svc, fresh, 'a token issued after the change');
    // Changed with the token itself: that token ends as well.
    const byToken = await svc.request('POST', '/api/v1/console/password', { bearer: fresh, body: { current_password: 'a brand new passphrase', new_password: 'yet another passphrase' } });
    assert.equal(byToken.status, 204, byToken.text);
    await assertTokenEnded(svc, fresh, 'the token that changed the password');
  });

  await t.test('a console sign-out ends the tokens of the user', async () => {
    const email = await acceptInvitation(svc, owner, `signout@${tenant.slug}.example`, 'support');
    const token = await tokenOf(svc, email);
    const person = await signInConsole(svc, email, PASSWORD);
    await assertTokenWorks(svc, token, 'before the sign-out');
    const out = await svc.request('DELETE', '/api/v1/console/session', asPerson(person));
    assert.equal(out.status, 204, out.text);
    await assertTokenEnded(svc, token, 'after the console sign-out');
  });

  await t.test('POST /auth/logout ends the token and the user\'s other tokens', async () => {
    const email = await acceptInvitation(svc, owner, `logout@${tenant.slug}.example`, 'analyst');
    const token = await tokenOf(svc, email);
    const other = await tokenOf(svc, email);
    const person = await signInConsole(svc, email, PASSWORD);
    const out = await svc.request('POST', '/api/v1/auth/logout', { bearer: token });
    assert.equal(out.status, 204, out.text);
    await assertTokenEnded(svc, token, 'the token logged out');
    await assertTokenEnded(svc, other, 'another token of the user');
    const again = await svc.request('POST', '/api/v1/auth/logout', { bearer: token });
    assert.equal(again.status, 401);
    // A console sign-in is a separate credential and goes on; a cookie or an API key cannot log out a token.
    assert.equal((await svc.request('GET', '/api/v1/console/session', asPerson(person))).status, 200);
    assert.equal((await svc.request('POST', '/api/v1/auth/logout', asPerson(person))).status, 401);
    assert.equal((await svc.request('POST', '/api/v1/auth/logout', { key: tenant.apiKey })).status, 401);
  });

  await t.test('a role change and a disable end the user\'s tokens; the disabled user\'s login gets the wrong-password 401', async () => {
    const email = await acceptInvitation(svc, owner, `disabled@${tenant.slug}.example`, 'marketer');
    const token = await tokenOf(svc, email);
    const userId = (await svc.request('GET', '/api/v1/console/session', { bearer: token })).body.user.id;
    const demoted = await svc.request('PATCH', `/api/v1/admin/users/${userId}`, { ...asPerson(owner), body: { role: 'analyst' } });
    assert.equal(demoted.status, 200, demoted.text);
    await assertTokenEnded(svc, token, 'after the role change');
    const second = await tokenOf(svc, email);
    const disabled = await svc.request('PATCH', `/api/v1/admin/users/${userId}`, { ...asPerson(owner), body: { status: 'disabled' } });
    assert.equal(disabled.status, 200, disabled.text);
    assert.equal((await svc.request('GET', '/api/v1/console/session', { bearer: second })).status, 401);

    const refused = await login(svc, email);
    assert.equal(refused.status, 401, refused.text);
    assert.deepEqual(answerOf(refused.body), answerOf(wrongPassword.body), 'the same answer as a wrong password: the account state is not revealed');
    const console = await svc.request('POST', '/api/v1/console/session', { body: { email, password: PASSWORD } });
    assert.equal(console.status, 401);
    assert.deepEqual(answerOf(console.body), answerOf(wrongPassword.body), 'the console sign-in does not reveal it either');

    // Enabled again, the user logs in, but the token disabled before stays ended.
    const enabled = await svc.request('PATCH', `/api/v1/admin/users/${userId}`, { ...asPerson(owner), body: { status: 'active' } });
    assert.equal(enabled.status, 200, enabled.text);
    await assertTokenEnded(svc, second, 'a token from before the disable, after the user is enabled again');
    await assertTokenWorks(svc, await tokenOf(svc, email), 'a new token after the user is enabled again');
  });

  await t.test('an invited user (invitation not accepted) gets the wrong-password 401', async () => {
    const invited = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email: `invited@${tenant.slug}.example`, role: 'analyst' } });
    assert.equal(invited.status, 201, invited.text);
    const refused = await login(svc, `invited@${tenant.slug}.example`, 'anything at all here');
    assert.equal(refused.status, 401);
    assert.deepEqual(answerOf(refused.body), answerOf(wrongPassword.body));
  });
});

// ---- finding 9: password guessing slowed per account and per address; TRUST_PROXY -------

function from(address: string): { headers: Record<string, string> } {
  return { headers: { 'x-forwarded-for': address } };
}

function assertLockedOut(answer: TestResponse, what: RegExp, message: string): number {
  assert.equal(answer.status, 429, `${message}: ${answer.status} ${answer.text}`);
  assert.equal(answer.body.code, 'RATE_LIMITED');
  assert.match(answer.body.detail, what, message);
  assert.match(answer.body.detail, /try again in \d+ s \(at \d{4}-\d\d-\d\dT/, message);
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 15 * 60, `${message}: Retry-After ${retryAfter}`);
  return retryAfter;
}

test('failed sign-ins lock an account out after 5, whatever the address; both ways in share the count; a success resets it', { timeout: 300_000 }, async (t) => {
  // Every hop trusted, so that each request can come from an address of its own.
  const svc = await startTestService(t, { config: { TRUST_PROXY: 'true' } });
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  let next = 1;
  const fresh = () => from(`198.51.100.${next++}`);

  await t.test('five wrong passwords from five addresses, then 429 with Retry-After, even for the right password and for the console', async () => {
    const email = await acceptInvitation(svc, owner, `guessed@${tenant.slug}.example`, 'analyst');
    for (let i = 0; i < 5; i++) {
      const wrong = await svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email, password: `guess number ${i}` } });
      assert.equal(wrong.status, 401, `failure ${i + 1}: ${wrong.text}`);
    }
    const sixth = await svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email, password: 'guess number 6' } });
    const retryAfter = assertLockedOut(sixth, /with this email/, 'the sixth attempt');
    assert.ok(retryAfter > 30 && retryAfter <= 60, `the first lockout is a minute (Retry-After ${retryAfter})`);
    assertLockedOut(await svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email, password: PASSWORD } }), /with this email/, 'the right password while locked out');
    assertLockedOut(await svc.request('POST', '/api/v1/console/session', { ...fresh(), body: { email: email.toUpperCase(), password: PASSWORD } }), /with this email/, 'the console sign-in');
    // Other accounts are not affected.
    assert.equal((await svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email: tenant.adminEmail, password: tenant.adminPassword } })).status, 200);
  });

  await t.test('attempts sent all at once are counted before any is checked: at most six are looked at', async () => {
    const email = await acceptInvitation(svc, owner, `burst@${tenant.slug}.example`, 'analyst');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email, password: `burst guess ${i}` } })));
    const checked = answers.filter((answer) => answer.status === 401).length;
    assert.ok(answers.every((answer) => answer.status === 401 || answer.status === 429), answers.map((a) => a.status).join(','));
    assert.ok(checked >= 5 && checked <= 6, `${checked} passwords were checked`);
  });

  await t.test('an unknown email is locked out alike (a lockout does not tell an account exists)', async () => {
    const email = `nobody-${next}@${tenant.slug}.example`;
    for (let i = 0; i < 5; i++) assert.equal((await svc.request('POST', '/api/v1/console/session', { ...fresh(), body: { email, password: 'whatever it is' } })).status, 401);
    assertLockedOut(await svc.request('POST', '/api/v1/console/session', { ...fresh(), body: { email, password: 'whatever it is' } }), /with this email/, 'unknown email');
  });

  await t.test('a success resets the account count', async () => {
    const email = await acceptInvitation(svc, owner, `forgetful@${tenant.slug}.example`, 'analyst');
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) assert.equal((await svc.request('POST', '/api/v1/auth/login', { ...fresh(), body: { email, password: `forgot it ${i}` } })).status, 401);
      assert.equal((await svc.request('POST', '/api/v1/console/session', { ...fresh(), body: { email, password: PASSWORD } })).status, 200, `round ${round + 1}`);
    }
  });
});

test('TRUST_PROXY=1: a forged left-most X-Forwarded-For changes neither the address seen nor its failure count', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t, { config: { TRUST_PROXY: '1' } });
  const tenant = await svc.createTenant();

  // The address recorded with a sign-in is the one the proxy (the socket's peer) put last.
  const signedIn = await svc.request('POST', '/api/v1/console/session', {
    headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.7' },
    body: { email: tenant.adminEmail, password: tenant.adminPassword },
  });
  assert.equal(signedIn.status, 200, signedIn.text);
  const [session] = await svc.sql('SELECT host(ip_address) AS ip FROM console_sessions WHERE user_id = $1', [signedIn.body.user.id]);
  assert.equal(session.ip, '203.0.113.7');

  // One client rotating the forged left-most entry over many accounts: its address's count runs out all the same.
  const refusals: TestResponse[] = [];
  for (let batch = 0; batch < 11 && refusals.length === 0; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        svc.request('POST', '/api/v1/auth/login', {
          headers: { 'x-forwarded-for': `10.9.${batch}.${i}, 203.0.113.50` },
          body: { email: `spray-${batch}-${i}@${tenant.slug}.example`, password: 'Spring2026!' },
        }),
      ),
    );
    for (const answer of answers) {
      if (answer.status === 429) refusals.push(answer);
      else assert.equal(answer.status, 401, answer.text);
    }
  }
  assert.ok(refusals.length > 0, 'the address was never locked out');
  assertLockedOut(refusals[0], /from this address/, 'the spraying address');
  // Another address is not affected.
  const other = await svc.request('POST', '/api/v1/auth/login', { headers: { 'x-forwarded-for': '1.2.3.4, 203.0.113.51' }, body: { email: tenant.adminEmail, password: tenant.adminPassword } });
  assert.equal(other.status, 200, other.text);
});

test('TRUST_PROXY takes false, a hop count, a list of addresses and ranges, or true (warned about); anything else fails the start', async (t) => {
  const { loadConfig, ConfigError, trustProxyOption } = await import('../src/config.js');
  const read = (value: string) => loadConfig({ APP_ENV: 'test', TRUST_PROXY: value }).trustProxy;
  assert.equal(read(''), false);
  assert.equal(read('false'), false);
  assert.equal(read('2'), 2);
  assert.deepEqual(read('10.0.0.0/8, 192.168.1.5,::1, fd00::/8,loopback'), ['10.0.0.0/8', '192.168.1.5', '::1', 'fd00::/8', 'loopback']);
  assert.equal(read('true'), true);
  for (const wrong of ['yes please', '11', '10.0.0.0/33', '10.0.0', 'proxy.example.com', '1,,2']) {
    assert.throws(() => read(wrong), (error: Error) => error instanceof ConfigError && /^TRUST_PROXY must be/.test(error.message), wrong);
  }
  const hops = trustProxyOption(2) as (address: string, hop: number) => boolean;
  assert.deepEqual([0, 1, 2].map((hop) => hops('10.0.0.1', hop)), [true, true, false]);

  const lines: string[] = [];
  await startTestService(t, { config: { TRUST_PROXY: 'true', LOG_LEVEL: 'warn' }, logDestination: { write: (line) => lines.push(line) } });
  assert.ok(lines.some((line) => /TRUST_PROXY=true trusts every hop/.test(line)), 'the start warns that every hop is trusted');
});
