import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';

test('files: a dry run checks a file as the import would apply it and keeps nothing', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const analyst = await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst');
  await grantPoints(svc, tenant, 'known', 5);
  const dryRun = (kind: string, csv: string, who: { headers: Record<string, string> } = asPerson(owner)) =>
    svc.request('POST', `/api/v1/admin/imports/dry-run?kind=${kind}&format=csv`, { ...who, raw: csv, headers: { ...who.headers, 'content-type': 'text/csv' } });
  const counts = async () =>
    (await svc.sql(
      `SELECT (SELECT count(*) FROM file_imports WHERE tenant_id = $1)::int AS imports, (SELECT count(*) FROM points_ledger WHERE tenant_id = $1)::int AS entries,
              (SELECT count(*) FROM participants WHERE tenant_id = $1)::int AS participants`,
      [tenant.tenantId],
    ))[0];
  const before = await counts();

  await t.test('point grants: counts, the points in all and the refused rows, and no ledger entry', async () => {
    const answer = await dryRun('point_grants', 'participant_id,amount,reason\nann,100,welcome\nbob,-3,oops\nann,50,again\ncid,x,bad\n');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.rows_total, 4);
    assert.equal(answer.body.rows_valid, 2);
    assert.equal(answer.body.rows_refused, 2);
    assert.equal(answer.body.participants, 1);
    assert.equal(answer.body.points_total, 150);
    assert.deepEqual(answer.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[2, 'amount'], [4, 'amount']]);
    assert.deepEqual(await counts(), before);
  });

  await t.test('participants: a bad column is refused at once; a good file is counted and nothing is written', async () => {
    const unknown = await dryRun('participants', 'participant_id,shoe_size\nann,42\n');
    assert.equal(unknown.status, 400, unknown.text);
    assert.equal(unknown.body.code, 'IMPORT_UNKNOWN_COLUMN');
    const answer = await dryRun('participants', 'participant_id,email,country_code\nnew-1,ann@example.com,DE\nnew-2,not-an-email,FR\n');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.rows_valid, 1);
    assert.equal(answer.body.errors[0].row, 2);
    assert.deepEqual(await counts(), before);
  });

  await t.test("a role without the kind's permission is refused", async () => {
    const refused = await dryRun('point_grants', 'participant_id,amount,reason\nann,1,x\n', asPerson(analyst));
    assert.equal(refused.status, 403, refused.text);
  });
});
