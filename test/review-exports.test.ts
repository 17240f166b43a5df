import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor, type TestResponse } from './helper.js';
import { asPerson, invitePerson, signInConsole, type ConsolePerson } from './console-people.js';

/**
 * Review finding 2 (issue 32): an unmasked export (a participants export asked
 * for by someone holding `read:pii`) is listed, read and downloaded only by
 * callers holding `read:pii`; every other role is answered as if it did not
 * exist. Every download of an export file lands in the personal-data access
 * log. The same holds for the error report of an import whose rows carried
 * personal values. Everything through HTTP, with console users of each role.
 */
const STAFF = ['marketer', 'support', 'reviewer', 'analyst'] as const;

test('review finding 2: unmasked exports and personal import error reports are for read:pii only; every download is in the access log', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const staff: Record<(typeof STAFF)[number], ConsolePerson> = {
    marketer: await invitePerson(svc, owner, `marketer@${tenant.slug}.example`, 'marketer'),
    support: await invitePerson(svc, owner, `support@${tenant.slug}.example`, 'support'),
    reviewer: await invitePerson(svc, owner, `reviewer@${tenant.slug}.example`, 'reviewer'),
    analyst: await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst'),
  };
  const keyOf = async (scopes: string[]) => {
    const created = await svc.request('POST', '/api/v1/events/api-keys', { ...asPerson(owner), body: { name: scopes.join(' '), scopes } });
    assert.equal(created.status, 201, created.text);
    return created.body.key as string;
  };
  const piiKey = await keyOf(['admin', 'read:pii']);
  const plainKey = await keyOf(['admin']);

  for (const [id, email] of [['p-1', 'ada.lovelace@example.com'], ['p-2', 'grace.hopper@example.com']]) {
    const written = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key: tenant.apiKey, body: { email, first_name: id } });
    assert.equal(written.status, 200, written.text);
  }

  /** Asks for an export as `who` and waits for the worker to finish it. */
  async function completedExport(who: { headers: Record<string, string> } | { key: string }, body: Record<string, unknown>): Promise<string> {
    const started = await svc.request('POST', '/api/v1/admin/exports', { ...who, body });
    assert.equal(started.status, 202, started.text);
    await waitFor(`export ${started.body.export_id} completed`, async () => (await svc.request('GET', `/api/v1/admin/exports/${started.body.export_id}`, asPerson(owner))).body.status === 'completed');
    return started.body.export_id;
  }

  const listed = async (who: { headers: Record<string, string> } | { key: string }): Promise<string[]> => {
    const list = await svc.request('GET', '/api/v1/admin/exports?limit=100', who);
    assert.equal(list.status, 200, list.text);
    return list.body.exports.map((e: { export_id: string }) => e.export_id);
  };
  const accessLog = async (): Promise<Array<Record<string, any>>> => {
    const log = await svc.request('GET', '/api/v1/admin/pii-access-log?limit=200', asPerson(owner));
    assert.equal(log.status, 200, log.text);
    return log.body.entries;
  };
  const assertNotFound = (response: TestResponse, what: string) => {
    assert.equal(response.status, 404, `${what}: ${response.status} ${response.text}`);
    assert.equal(response.body.code, 'EXPORT_NOT_FOUND', what);
    assert.ok(!response.text.includes('@example.com'), what);
  };

  const unmasked = await completedExport(asPerson(owner), { kind: 'participants', format: 'csv' });
  const masked = await completedExport(asPerson(staff.support), { kind: 'participants', format: 'jsonl' });

  await t.test('the owner sees the unmasked export, reads it and downloads it with the real emails', async () => {
    const view = await svc.request('GET', `/api/v1/admin/exports/${unmasked}`, asPerson(owner));
    assert.equal(view.status, 200, view.text);
    assert.equal(view.body.masked, false);
    assert.ok((await listed(asPerson(owner))).includes(unmasked));
    const file = await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, asPerson(owner));
    assert.equal(file.status, 200, file.text);
    assert.ok(file.text.includes('ada.lovelace@example.com') && file.text.includes('grace.hopper@example.com'), file.text);
  });

  await t.test('marketer, support, reviewer and analyst get 404 on read and download, and do not see it listed', async () => {
    const nowhere = await svc.request('GET', '/api/v1/admin/exports/exp_doesnotexist', asPerson(staff.analyst));
    for (const [role, person] of Object.entries(staff)) {
      const read = await svc.request('GET', `/api/v1/admin/exports/${unmasked}`, asPerson(person));
      assertNotFound(read, `${role} reads`);
      assert.deepEqual({ ...read.body, request_id: null }, { ...nowhere.body, request_id: null }, `${role}: the answer is the one for an export that does not exist`);
      assertNotFound(await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, asPerson(person)), `${role} downloads`);
      assert.equal((await svc.request('HEAD', `/api/v1/admin/exports/${unmasked}/file`, asPerson(person))).status, 404, `${role} HEAD`);
      const ids = await listed(asPerson(person));
      assert.ok(!ids.includes(unmasked), `${role} does not see the unmasked export listed`);
      assert.ok(ids.includes(masked), `${role} still sees the masked export`);
    }
  });

  await t.test('API keys: without read:pii the same 404 and no listing; with it, the file', async () => {
    assertNotFound(await svc.request('GET', `/api/v1/admin/exports/${unmasked}`, { key: plainKey }), 'plain key reads');
    assertNotFound(await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, { key: plainKey }), 'plain key downloads');
    assert.ok(!(await listed({ key: plainKey })).includes(unmasked));
    const file = await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, { key: piiKey });
    assert.equal(file.status, 200, file.text);
    assert.ok((await listed({ key: piiKey })).includes(unmasked));
  });

  await t.test('a masked export is read and downloaded by every role, without the emails', async () => {
    for (const [role, person] of Object.entries(staff)) {
      const file = await svc.request('GET', `/api/v1/admin/exports/${masked}/file`, asPerson(person));
      assert.equal(file.status, 200, `${role}: ${file.text}`);
      assert.ok(!file.text.includes('ada.lovelace@example.com'), role);
    }
  });

  await t.test('every download is in the personal-data access log: who, when, which export', async () => {
    const started = Date.now();
    const before = new Set((await accessLog()).map((e) => e.id));
    const ownerDownload = await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, asPerson(owner));
    assert.equal(ownerDownload.status, 200);
    const supportDownload = await svc.request('GET', `/api/v1/admin/exports/${masked}/file`, asPerson(staff.support));
    assert.equal(supportDownload.status, 200);
    const refused = await svc.request('GET', `/api/v1/admin/exports/${unmasked}/file`, asPerson(staff.marketer));
    assert.equal(refused.status, 404);
    const head = await svc.request('HEAD', `/api/v1/admin/exports/${unmasked}/file`, asPerson(owner));
    assert.equal(head.status, 200, 'a HEAD request sends no file and is not logged');
    const added = (await accessLog()).filter((e) => !before.has(e.id));
    const ownerEntry = added.find((e) => e.actor_id === `admin_user:${owner.userId}`);
    assert.ok(ownerEntry, `the owner's download is logged: ${JSON.stringify(added)}`);
    assert.match(ownerEntry.reason, new RegExp(`download of export ${unmasked}`));
    assert.match(ownerEntry.reason, /unmasked/);
    assert.equal(ownerEntry.export_format, 'csv');
    assert.equal(ownerEntry.row_count, 2);
    assert.ok(ownerEntry.fields_accessed.includes('email'), JSON.stringify(ownerEntry));
    assert.ok(Date.parse(ownerEntry.occurred_at) >= started - 1_000, 'when');
    const supportEntry = added.find((e) => e.actor_id === `admin_user:${staff.support.userId}`);
    assert.ok(supportEntry, `the masked download is logged too: ${JSON.stringify(added)}`);
    assert.match(supportEntry.reason, new RegExp(`download of export ${masked}.*masked`));
    assert.deepEqual(supportEntry.fields_accessed, [], 'a masked file discloses no personal field');
    assert.equal(supportEntry.export_format, 'json');
    assert.ok(!added.some((e) => e.actor_id === `admin_user:${staff.marketer.userId}`), 'a refused download is not a download');
    assert.equal(added.length, 2, JSON.stringify(added));
  });

  await t.test("the error report of a participants import by a read:pii holder is for read:pii only: a malformed line's text may be in it", async () => {
    const body = '{"participant_id":"p-3","email":"dora@example.com"}\ncarol.secret@example.com\n';
    const uploaded = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=jsonl', { ...asPerson(owner), raw: body, headers: { ...asPerson(owner).headers, 'content-type': 'application/x-ndjson' } });
    assert.equal(uploaded.status, 202, uploaded.text);
    const id = uploaded.body.import_id;
    await waitFor(`import ${id} completed`, async () => (await svc.request('GET', `/api/v1/admin/imports/${id}`, asPerson(owner))).body.status === 'completed');
    const report = await svc.request('GET', `/api/v1/admin/imports/${id}/errors`, asPerson(owner));
    assert.equal(report.status, 200, report.text);
    assert.deepEqual(report.body.errors.map((e: { row: number }) => e.row), [2]);
    const refused = await svc.request('GET', `/api/v1/admin/imports/${id}/errors`, asPerson(staff.support));
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.detail, /read:pii/);
    assert.ok(!refused.text.includes('carol'));
    assert.equal((await svc.request('GET', `/api/v1/admin/imports/${id}/errors`, { key: plainKey })).status, 403);
    // Its progress holds no personal value and stays readable.
    assert.equal((await svc.request('GET', `/api/v1/admin/imports/${id}`, asPerson(staff.support))).status, 200);
    // Another kind keeps its report readable by the roles that may import it.
    const grants = await svc.request('POST', '/api/v1/admin/imports?kind=point_grants&format=csv', { ...asPerson(owner), raw: 'participant_id,amount,reason\np-1,x,r\n', headers: { ...asPerson(owner).headers, 'content-type': 'text/csv' } });
    assert.equal(grants.status, 202, grants.text);
    await waitFor('grants import completed', async () => (await svc.request('GET', `/api/v1/admin/imports/${grants.body.import_id}`, asPerson(owner))).body.status === 'completed');
    assert.equal((await svc.request('GET', `/api/v1/admin/imports/${grants.body.import_id}/errors`, asPerson(staff.support))).status, 200);
  });
});
