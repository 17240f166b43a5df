import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from '../../../test/helper.js';
import { APP_ROLE } from '../../platform/migrate.js';
import { sha256Hex } from '../../platform/ids.js';
import * as store from './store.js';

/**
 * The users module runs on the tenant pool (issue 33, item 4): another
 * tenant's console users are out of reach through the API, and the store's
 * statements find and change nothing when run in another tenant's transaction,
 * because row-level security holds them, whatever tenant id they are passed.
 */
const OTHER_PASSWORD = 'correct horse battery';

test('users: tenant isolation through the tenant pool', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const db = svc.service.db;
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const tokenA = await svc.login(tenantA);
  const tokenB = await svc.login(tenantB);

  const listedB = await svc.request('GET', '/api/v1/admin/users', { bearer: tokenB });
  assert.equal(listedB.status, 200, listedB.text);
  const ownerB: string = listedB.body.users[0].id;

  // An invited user of tenant B, and a console sign-in of B's owner (a console_sessions row).
  const invited = await svc.request('POST', '/api/v1/admin/users', { bearer: tokenB, body: { email: `staff@${tenantB.slug}.example`, role: 'marketer' } });
  assert.equal(invited.status, 201, invited.text);
  const invitedB: string = invited.body.user.id;
  const inviteToken = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
  const signedIn = await svc.request('POST', '/api/v1/console/session', { body: { email: tenantB.adminEmail, password: tenantB.adminPassword } });
  assert.equal(signedIn.status, 200, signedIn.text);
  assert.equal(signedIn.body.tenant.id, tenantB.tenantId, 'the sign-in answers with its own tenant');

  const snapshotOfB = () =>
    svc.sql(
      `SELECT id, email, role, can_publish, name, status, password_hash, invite_token_hash, token_version, updated_at FROM admin_users WHERE tenant_id = $1 ORDER BY id`,
      [tenantB.tenantId],
    );
  const sessionsOfB = () => svc.sql('SELECT id, revoked_at, last_seen_at FROM console_sessions WHERE tenant_id = $1 ORDER BY id', [tenantB.tenantId]);

  await t.test("tenant A's credential answers 404 for tenant B's users and changes nothing", async () => {
    const before = await snapshotOfB();
    for (const id of [ownerB, invitedB]) {
      const read = await svc.request('GET', `/api/v1/admin/users/${id}`, { bearer: tokenA });
      assert.equal(read.status, 404, read.text);
      const demoted = await svc.request('PATCH', `/api/v1/admin/users/${id}`, { bearer: tokenA, body: { role: 'analyst', name: 'taken over' } });
      assert.equal(demoted.status, 404, demoted.text);
      const disabled = await svc.request('PATCH', `/api/v1/admin/users/${id}`, { bearer: tokenA, body: { status: 'disabled' } });
      assert.equal(disabled.status, 404, disabled.text);
      const removed = await svc.request('DELETE', `/api/v1/admin/users/${id}`, { bearer: tokenA });
      assert.equal(removed.status, 404, removed.text);
    }
    const listedA = await svc.request('GET', '/api/v1/admin/users', { bearer: tokenA });
    assert.equal(listedA.status, 200, listedA.text);
    assert.deepEqual(
      listedA.body.users.map((user: { email: string }) => user.email),
      [tenantA.adminEmail],
    );
    assert.deepEqual(await snapshotOfB(), before, "tenant B's users are as they were");
    // B's owner still works: its token was not ended by any of the above.
    const stillB = await svc.request('GET', `/api/v1/admin/users/${ownerB}`, { bearer: tokenB });
    assert.equal(stillB.status, 200, stillB.text);
  });

  await t.test("the store's statements find and change nothing in another tenant's transaction", async () => {
    const auditOfB = await svc.sql('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [tenantB.tenantId]);
    assert.ok(auditOfB[0].n > 0, 'tenant B has audit entries to hide');
    const usersBefore = await snapshotOfB();
    const sessionsBefore = await sessionsOfB();
    assert.equal(sessionsBefore.length, 1);
    const sessionB: string = sessionsBefore[0].id;
    const now = new Date();
    const noFilter: store.AuditQuery = { resourceType: null, resourceId: null, actorId: null, from: null, to: null };

    // As a control, B's own transaction sees what A's must not.
    await db.tenant(tenantB.tenantId, async (tx) => {
      assert.equal((await store.readUser(tx, tenantB.tenantId, ownerB))?.id, ownerB);
      assert.equal((await store.readTenantSummary(tx, tenantB.tenantId))?.id, tenantB.tenantId);
      assert.ok(await store.readPasswordHash(tx, tenantB.tenantId, ownerB));
      assert.equal((await store.listUsers(tx, tenantB.tenantId, null, 10)).length, 2);
      assert.equal(await store.emailTaken(tx, tenantB.tenantId, tenantB.adminEmail), true);
      assert.equal((await store.lockUserAndOwners(tx, tenantB.tenantId, invitedB, true)).length, 2);
      assert.equal(await store.countOtherActiveOwners(tx, tenantB.tenantId, invitedB), 1);
      assert.ok((await store.readAuditLog(tx, tenantB.tenantId, noFilter, null, 10)).length > 0);
    });

    await db.tenant(tenantA.tenantId, async (tx) => {
      const { rows } = await tx.query('SELECT current_user AS role');
      assert.equal(rows[0].role, APP_ROLE, 'db.tenant runs as the application role, which row-level security binds');
      const B = tenantB.tenantId;
      assert.equal(await store.readUser(tx, B, ownerB), undefined);
      assert.equal(await store.readTenantSummary(tx, B), undefined);
      assert.equal(await store.readPasswordHash(tx, B, ownerB), null);
      assert.deepEqual(await store.listUsers(tx, B, null, 10), []);
      assert.equal(await store.emailTaken(tx, B, tenantB.adminEmail), false);
      assert.deepEqual(await store.lockUserAndOwners(tx, B, ownerB, true), []);
      assert.equal(await store.countOtherActiveOwners(tx, B, invitedB), 0);
      assert.deepEqual(await store.readAuditLog(tx, B, noFilter, null, 10), []);
      assert.equal(await store.updateUser(tx, B, ownerB, { role: 'analyst', canPublish: false, name: 'x', status: 'disabled' }, true, now), undefined);
      assert.equal(
        await store.acceptInvitation(tx, B, { inviteTokenHash: sha256Hex(inviteToken), passwordHash: 'not-a-hash', name: null }, now),
        undefined,
      );
      await store.setPassword(tx, B, ownerB, 'not-a-hash', now);
      await store.bumpTokenVersion(tx, B, ownerB);
      await store.revokeConsoleSession(tx, B, sessionB, now);
      await store.revokeConsoleSessionsOfUser(tx, B, ownerB, null, now);
      assert.equal(await store.deleteUser(tx, B, invitedB), false);
    });

    // Inserts for another tenant are refused by the policy's WITH CHECK (42501), each in a transaction of its own.
    await assert.rejects(
      db.tenant(tenantA.tenantId, (tx) =>
        store.insertConsoleSession(tx, tenantB.tenantId, { id: randomUUID(), userId: ownerB, tokenHash: sha256Hex(randomUUID()), expiresAt: now, ipAddress: null }, now),
      ),
      (error: { code?: string }) => error.code === '42501',
    );
    await assert.rejects(
      db.tenant(tenantA.tenantId, (tx) =>
        store.insertInvitedUser(
          tx,
          tenantB.tenantId,
          { id: randomUUID(), email: `intruder-${randomUUID()}@example.com`, role: 'owner', canPublish: true, name: null, inviteTokenHash: 'x', inviteExpiresAt: now, invitedBy: null },
          now,
        ),
      ),
      (error: { code?: string }) => error.code === '42501',
    );

    assert.deepEqual(await snapshotOfB(), usersBefore, "tenant B's users are as they were");
    assert.deepEqual(await sessionsOfB(), sessionsBefore, "tenant B's console sign-ins are as they were");
  });

  await t.test("an invitation is accepted under its own tenant only: the token's tenant part cannot be swapped", async () => {
    const secret = inviteToken.slice(inviteToken.indexOf('.') + 1);
    for (const forged of [`${tenantA.tenantId}.${secret}`, `${'-'.repeat(36)}.${secret}`]) {
      const refused = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token: forged, password: OTHER_PASSWORD } });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'INVITATION_INVALID');
    }
    const [still] = await svc.sql('SELECT status FROM admin_users WHERE tenant_id = $1 AND id = $2', [tenantB.tenantId, invitedB]);
    assert.equal(still.status, 'invited');
    const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token: inviteToken, password: OTHER_PASSWORD } });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.user.id, invitedB);
    assert.equal(accepted.body.user.status, 'active');
  });
});

test("the users module's code never reaches for the owner pool (its only owner-pool look-ups live in platform/console-auth.ts)", () => {
  for (const file of ['service.ts', 'store.ts', 'routes.ts']) {
    const source = fs.readFileSync(path.join(import.meta.dirname, file), 'utf8');
    assert.doesNotMatch(source, /\.system\b|systemTx/, `${file} uses the owner pool`);
  }
});
