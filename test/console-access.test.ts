import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestService, type TestTenant } from './helper.js';
import { asPerson, invitePerson, signInConsole, type ConsolePerson } from './console-people.js';
import { routePermission, ROLES } from '../src/platform/permissions.js';

/**
 * Console access: cookie sign-in with CSRF, roles enforced by the server on
 * every route, invitations, the last owner, the audit log and the reveal of a
 * personal field with its access-log entry. Everything through HTTP.
 */
test('console access: sign-in, CSRF, roles on every route, invitations, audit log, reveal', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const other = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const ownerPool = new pg.Pool({ connectionString: svc.ownerUrl, max: 2 });
  t.after(() => ownerPool.end());

  await t.test('every credentialed route of the API is classified for the roles', async () => {
    const spec = await svc.request('GET', '/openapi.json');
    const unclassified: string[] = [];
    for (const [path, operations] of Object.entries(spec.body.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.security || operation.security.length === 0) continue;
        if (operation.security.some((s) => 'Session' in (s as object))) continue;
        // The platform operator's routes take no tenant credential at all (access/operator-auth.ts).
        if (operation.security.every((s) => 'OperatorToken' in (s as object))) continue;
        const pattern = path.replace(/\{([^}]+)\}/g, ':$1');
        if (routePermission(method.toUpperCase(), pattern) === null && !pattern.startsWith('/api/v1/console/')) unclassified.push(`${method.toUpperCase()} ${pattern}`);
      }
    }
    assert.deepEqual(unclassified, []);
  });

  await t.test('the sign-in cookie is HttpOnly and SameSite=Strict; the session reads back with its permissions', async () => {
    const response = await svc.request('POST', '/api/v1/console/session', { body: { email: tenant.adminEmail, password: tenant.adminPassword } });
    const set = response.headers.get('set-cookie')!;
    assert.match(set, /HttpOnly/i);
    assert.match(set, /SameSite=Strict/i);
    assert.match(set, /Path=\//);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const me = await svc.request('GET', '/api/v1/console/session', asPerson(owner, false));
    assert.equal(me.status, 200);
    assert.equal(me.body.user.role, 'owner');
    assert.equal(me.body.tenant.id, tenant.tenantId);
    assert.ok(me.body.permissions.includes('access:manage'));
    assert.equal(me.body.csrf_token, owner.csrf);
    const wrong = await svc.request('POST', '/api/v1/console/session', { body: { email: tenant.adminEmail, password: 'not the password' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'AUTH_UNAUTHENTICATED');
  });

  await t.test('a change without the CSRF token is refused and changes nothing; with it, it goes through', async () => {
    const refused = await svc.request('POST', '/api/v1/admin/rules', {
      headers: { cookie: owner.cookie },
      body: { name: 'csrf rule', event_name: 'x', effects: [{ type: 'award_points', points: 1 }] },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'AUTH_CSRF_INVALID');
    const forged = await svc.request('POST', '/api/v1/admin/rules', {
      headers: { cookie: owner.cookie, 'x-csrf-token': 'A'.repeat(43) },
      body: { name: 'csrf rule', event_name: 'x', effects: [{ type: 'award_points', points: 1 }] },
    });
    assert.equal(forged.status, 403);
    const list = await svc.request('GET', '/api/v1/admin/rules', asPerson(owner, false));
    assert.equal(list.body.rules?.length ?? list.body.items?.length ?? 0, 0);
    const created = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(owner), body: { name: 'csrf rule', event_name: 'x', effects: [{ type: 'award_points', points: 1 }] } });
    assert.equal(created.status, 201, created.text);
  });

  const marketer = await invitePerson(svc, owner, `marketer@${tenant.slug}.example`, 'marketer');
  const support = await invitePerson(svc, owner, `support@${tenant.slug}.example`, 'support');
  const reviewer = await invitePerson(svc, owner, `reviewer@${tenant.slug}.example`, 'reviewer');
  const analyst = await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst');
  const engagementId = await (async () => {
    const session = await svc.createSession(tenant);
    return session.engagementId;
  })();
  await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: tenant.apiKey, body: { email: 'ada.lovelace@example.com', first_name: 'Ada' } });
  await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: 'p-1', amount: 100, reason: 'seed', idempotency_key: 'seed-1' } });

  await t.test('each role is held to its permissions by the server', async () => {
    const rule = { name: 'role rule', event_name: 'purchase', effects: [{ type: 'award_points', points: 5 }] };
    const cases: Array<[string, ConsolePerson, string, string, unknown, boolean]> = [
      ['marketer creates a rule', marketer, 'POST', '/api/v1/admin/rules', rule, true],
      ['marketer without can_publish publishes', marketer, 'POST', `/api/v1/admin/engagements/${engagementId}/publish`, {}, false],
      ['marketer lists users', marketer, 'GET', '/api/v1/admin/users', undefined, false],
      ['marketer grants points', marketer, 'POST', '/api/v1/gamify/points/grant', { participant_id: 'p-1', amount: 5, reason: 'r', idempotency_key: 'm-1' }, false],
      ['marketer reads the audit log', marketer, 'GET', '/api/v1/admin/audit-log', undefined, false],
      ['support grants points', support, 'POST', '/api/v1/gamify/points/grant', { participant_id: 'p-1', amount: 5, reason: 'goodwill', idempotency_key: 's-1' }, true],
      ['support creates a rule', support, 'POST', '/api/v1/admin/rules', rule, false],
      ['support reads a participant', support, 'GET', '/api/v1/gamify/admin/participants/p-1', undefined, true],
      ['support manages webhooks', support, 'POST', '/api/v1/gamify/webhooks', { url: 'https://example.com/h', events: ['points.awarded.v1'] }, false],
      ['reviewer reads the fraud queue', reviewer, 'GET', '/api/v1/admin/fraud/reviews', undefined, true],
      ['reviewer creates a rule', reviewer, 'POST', '/api/v1/admin/rules', rule, false],
      ['reviewer grants points', reviewer, 'POST', '/api/v1/gamify/points/grant', { participant_id: 'p-1', amount: 5, reason: 'r', idempotency_key: 'r-1' }, false],
      ['analyst reads rules', analyst, 'GET', '/api/v1/admin/rules', undefined, true],
      ['analyst reads the audit log', analyst, 'GET', '/api/v1/admin/audit-log', undefined, true],
      ['analyst creates a rule', analyst, 'POST', '/api/v1/admin/rules', rule, false],
      ['analyst erases a participant', analyst, 'DELETE', '/api/v1/gamify/admin/participants/p-1', undefined, false],
      ['analyst creates an API key', analyst, 'POST', '/api/v1/events/api-keys', { name: 'k', scopes: ['admin'] }, false],
      ['analyst reveals a field', analyst, 'POST', '/api/v1/admin/participants/p-1/reveal', { field: 'email', reason: 'checking a complaint' }, false],
    ];
    for (const [name, person, method, path, body, allowed] of cases) {
      const response = await svc.request(method, path, { ...asPerson(person), body });
      if (allowed) assert.ok(response.status < 400, `${name}: ${response.status} ${response.text}`);
      else {
        assert.equal(response.status, 403, `${name}: ${response.status} ${response.text}`);
        assert.equal(response.body.code, 'AUTH_FORBIDDEN', name);
        assert.match(response.body.detail, /role may not do this/, name);
      }
    }
    // The refused grants and rules changed nothing.
    const state = await svc.request('GET', '/api/v1/gamify/state/p-1?include=points', { key: tenant.apiKey });
    assert.equal(state.body.points.available, 105);
  });

  await t.test('personal data stays masked for support; a reveal states a reason and lands in the access log', async () => {
    const masked = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', asPerson(support, false));
    assert.equal(masked.body.masked, true);
    assert.notEqual(masked.body.email, 'ada.lovelace@example.com');
    const short = await svc.request('POST', '/api/v1/admin/participants/p-1/reveal', { ...asPerson(support), body: { field: 'email', reason: 'why' } });
    assert.equal(short.status, 400);
    const revealed = await svc.request('POST', '/api/v1/admin/participants/p-1/reveal', { ...asPerson(support), body: { field: 'email', reason: 'customer called about a lost reward' } });
    assert.equal(revealed.status, 200, revealed.text);
    assert.equal(revealed.body.value, 'ada.lovelace@example.com');
    const log = await svc.request('GET', '/api/v1/admin/pii-access-log?participant_id=p-1', asPerson(owner, false));
    assert.equal(log.status, 200, log.text);
    const entry = log.body.entries.find((e: { id: string }) => e.id === revealed.body.access_log_id);
    assert.ok(entry, 'the reveal is in the access log');
    assert.equal(entry.reason, 'customer called about a lost reward');
    assert.deepEqual(entry.fields_accessed, ['email']);
    assert.equal(entry.actor_id, `admin_user:${support.userId}`);
    const supportReadsLog = await svc.request('GET', '/api/v1/admin/pii-access-log', asPerson(support, false));
    assert.equal(supportReadsLog.status, 403);
  });

  await t.test('publishing is a permission of its own: granted by an owner, the marketer publishes', async () => {
    const granted = await svc.request('PATCH', `/api/v1/admin/users/${marketer.userId}`, { ...asPerson(owner), body: { can_publish: true } });
    assert.equal(granted.status, 200, granted.text);
    const published = await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, { ...asPerson(marketer), body: {} });
    assert.notEqual(published.status, 403, published.text);
  });

  await t.test('the audit log records who changed what, before and after, and keeps it after an erasure', async () => {
    const created = await svc.request('POST', '/api/v1/admin/rules', {
      ...asPerson(marketer),
      body: { name: 'Double points', event_name: 'purchase', effects: [{ type: 'award_points', points: 2 }] },
    });
    assert.equal(created.status, 201, created.text);
    const ruleId = created.body.rule_id ?? created.body.id;
    const updated = await svc.request('PATCH', `/api/v1/admin/rules/${ruleId}`, { ...asPerson(marketer), body: { name: 'Triple points' } });
    assert.equal(updated.status, 200, updated.text);
    const log = await svc.request('GET', `/api/v1/admin/audit-log?resource_type=rules&resource_id=${ruleId}`, asPerson(owner, false));
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.entries.length, 2, JSON.stringify(log.body.entries.map((e: { action: string; occurred_at: string }) => [e.action, e.occurred_at])));
    const [update, create] = log.body.entries;
    assert.equal(update.action, 'update');
    assert.equal(update.actor_type, 'user');
    assert.equal(update.actor_id, marketer.userId);
    assert.match(update.actor_label, /marketer/);
    assert.equal(update.before.name, 'Double points');
    assert.equal(update.after.name, 'Triple points');
    assert.equal(create.action, 'create');
    assert.equal(create.before, null);
    assert.equal(create.after.name, 'Double points');
    // The support grant was recorded, the integrator's grant by key was not.
    const personal = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=participants&resource_id=p-1', asPerson(owner, false));
    const grants = personal.body.entries.filter((e: { action: string }) => e.action === 'grant');
    assert.equal(grants.length, 1, JSON.stringify(personal.body.entries));
    assert.equal(grants[0].actor_id, support.userId);
    assert.equal(grants[0].details.body.reason, 'goodwill');
    assert.equal(grants[0].details.body.amount, 5);
    // Reveals are recorded without the value.
    const reveals = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=participants', asPerson(owner, false));
    const reveal = reveals.body.entries.find((e: { action: string }) => e.action === 'reveal');
    assert.ok(reveal);
    assert.ok(!JSON.stringify(reveal).includes('ada.lovelace'), 'no personal value in the audit log');
    // Erasure keeps the log.
    const erased = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-1', asPerson(support));
    assert.equal(erased.status, 200, erased.text);
    const after = await svc.request('GET', '/api/v1/admin/audit-log?limit=200', asPerson(owner, false));
    assert.ok(after.body.entries.length >= 6);
    assert.ok(!JSON.stringify(after.body).includes('ada.lovelace'));
    // Another tenant sees none of it.
    const otherOwner = await signInConsole(svc, other.adminEmail, other.adminPassword);
    const foreign = await svc.request('GET', '/api/v1/admin/audit-log', asPerson(otherOwner, false));
    assert.equal(foreign.body.entries.length, 0);
    const crossed = await svc.request('GET', '/api/v1/admin/audit-log', { headers: { cookie: otherOwner.cookie, 'x-service-tenant': tenant.tenantId } });
    assert.equal(crossed.status, 403);
  });

  await t.test('the last owner cannot be demoted or removed; a disabled user is refused at once', async () => {
    const demote = await svc.request('PATCH', `/api/v1/admin/users/${owner.userId}`, { ...asPerson(owner), body: { role: 'analyst' } });
    assert.equal(demote.status, 409);
    assert.equal(demote.body.code, 'LAST_OWNER');
    const remove = await svc.request('DELETE', `/api/v1/admin/users/${owner.userId}`, asPerson(owner));
    assert.equal(remove.status, 409);
    const disabled = await svc.request('PATCH', `/api/v1/admin/users/${analyst.userId}`, { ...asPerson(owner), body: { status: 'disabled' } });
    assert.equal(disabled.status, 200, disabled.text);
    const refused = await svc.request('GET', '/api/v1/admin/rules', asPerson(analyst, false));
    assert.equal(refused.status, 401);
    const again = await svc.request('POST', '/api/v1/console/session', { body: { email: `analyst@${tenant.slug}.example`, password: 'correct horse battery' } });
    assert.equal(again.status, 401);
    // A role change ends the user's admin login tokens at once (issue 32, finding 8); a new token acts with the new role.
    const login = await svc.request('POST', '/api/v1/auth/login', { body: { email: `reviewer@${tenant.slug}.example`, password: 'correct horse battery' } });
    assert.equal(login.status, 200, login.text);
    const before = await svc.request('GET', '/api/v1/admin/fraud/reviews', { bearer: login.body.token });
    assert.equal(before.status, 200);
    await svc.request('PATCH', `/api/v1/admin/users/${reviewer.userId}`, { ...asPerson(owner), body: { role: 'marketer' } });
    const afterDemotion = await svc.request('GET', '/api/v1/admin/fraud/reviews', { bearer: login.body.token });
    assert.equal(afterDemotion.status, 401);
    const relogin = await svc.request('POST', '/api/v1/auth/login', { body: { email: `reviewer@${tenant.slug}.example`, password: 'correct horse battery' } });
    assert.equal((await svc.request('GET', '/api/v1/admin/fraud/reviews', { bearer: relogin.body.token })).status, 403);
  });

  await t.test('invitations: used once, a taken email refused, bad input explained', async () => {
    const invited = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email: `once@${tenant.slug}.example`, role: 'analyst' } });
    const token = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
    assert.equal(invited.body.user.status, 'invited');
    const first = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: 'a long enough password' } });
    assert.equal(first.status, 200);
    const second = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: 'a long enough password' } });
    assert.equal(second.status, 400);
    assert.equal(second.body.code, 'INVITATION_INVALID');
    const taken = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email: other.adminEmail, role: 'analyst' } });
    assert.equal(taken.status, 409);
    const badRole = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email: 'x@example.com', role: 'superuser' } });
    assert.equal(badRole.status, 400);
    assert.ok(badRole.body.detail);
    const shortPassword = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token: `${tenant.tenantId}.abcdefghij`, password: 'short' } });
    assert.equal(shortPassword.status, 400);
    const users = await svc.request('GET', '/api/v1/admin/users?limit=2', asPerson(owner, false));
    assert.equal(users.body.users.length, 2);
    assert.ok(users.body.next_cursor);
    const rest = await svc.request('GET', `/api/v1/admin/users?limit=100&cursor=${users.body.next_cursor}`, asPerson(owner, false));
    assert.equal(users.body.users.length + rest.body.users.length, 6);
  });

  await t.test('password change ends the other sign-ins; sign-out and idle expiry end a sign-in', async () => {
    const second = await signInConsole(svc, `marketer@${tenant.slug}.example`, 'correct horse battery');
    const changed = await svc.request('POST', '/api/v1/console/password', {
      ...asPerson(marketer),
      body: { current_password: 'correct horse battery', new_password: 'an even better passphrase' },
    });
    assert.equal(changed.status, 204, changed.text);
    assert.equal((await svc.request('GET', '/api/v1/console/session', asPerson(second, false))).status, 401);
    assert.equal((await svc.request('GET', '/api/v1/console/session', asPerson(marketer, false))).status, 200);
    const out = await svc.request('DELETE', '/api/v1/console/session', asPerson(marketer));
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /lk_console=;/);
    assert.equal((await svc.request('GET', '/api/v1/console/session', asPerson(marketer, false))).status, 401);
    const idle = await signInConsole(svc, `marketer@${tenant.slug}.example`, 'an even better passphrase');
    await ownerPool.query(`UPDATE console_sessions SET last_seen_at = now() - interval '3 hours' WHERE user_id = $1 AND revoked_at IS NULL`, [marketer.userId]);
    const expired = await svc.request('GET', '/api/v1/console/session', asPerson(idle, false));
    assert.equal(expired.status, 401);
    assert.match(expired.body.detail, /expired/);
  });

  await t.test('API keys keep their scopes; the account routes are for people', async () => {
    const keyed = await svc.request('GET', '/api/v1/console/session', { key: tenant.apiKey });
    assert.equal(keyed.status, 403);
    assert.deepEqual([...ROLES], ['owner', 'marketer', 'support', 'reviewer', 'analyst']);
  });
});
