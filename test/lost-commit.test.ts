import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { failNextCommit } from './database-faults.js';
import { CommitOutcomeUnknown } from '../src/platform/db.js';

/**
 * A transaction whose COMMIT message loses its answer (the connection drops
 * after the database ran it) may have committed: the database layer throws
 * `CommitOutcomeUnknown` and never runs it again, a request answers 503
 * `COMMIT_OUTCOME_UNKNOWN`, and a repeat of its idempotency key is never
 * applied a second time. A COMMIT the database refused committed nothing.
 */
const multiplier = {
  multiplier: 2,
  starts_at: '2026-01-01T00:00:00Z',
  ends_at: '2027-01-01T00:00:00Z',
  match: { event_type: 'purchase' },
};

test('a lost COMMIT answers 503 COMMIT_OUTCOME_UNKNOWN and is applied once, whatever repeats it', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ plan: 'enterprise' });
  const db = svc.service.db;
  const multipliers = async () => (await svc.request('GET', '/api/v1/admin/points/multipliers', { key: tenant.apiKey })).body.multipliers.length;

  await t.test('the database layer: never run again, for each way a transaction commits', async (t) => {
    const rows = async () => (await svc.sql('SELECT count(*)::int AS n FROM points_multipliers WHERE tenant_id = $1', [tenant.tenantId]))[0].n as number;
    const before = await rows();
    const insert = (tag: string) => ({
      text: `INSERT INTO points_multipliers (tenant_id, id, multiplier, starts_at, ends_at, event_type, attributes, created_at)
             VALUES ($1, $2, 2, now(), now() + interval '1 day', 'purchase', '{}', now())`,
      values: [tenant.tenantId, `pmul_lost_${tag}`],
    });
    let runs = 0;
    // tenant(): its COMMIT is a message of its own.
    failNextCommit(t, db, { how: 'lost', after: /points_multipliers/ });
    await assert.rejects(
      db.tenant(tenant.tenantId, async (tx) => {
        runs++;
        const { text, values } = insert('tenant');
        await tx.query(text, values as unknown[]);
      }),
      (error: unknown) => error instanceof CommitOutcomeUnknown && /Connection terminated unexpectedly/.test(error.message),
    );
    // tenantEndingWith(): the last statements travel with the COMMIT.
    failNextCommit(t, db, { how: 'lost', after: /points_multipliers/ });
    await assert.rejects(
      db.tenantEndingWith(tenant.tenantId, async () => {
        runs++;
        return { result: null, last: [insert('ending')] };
      }),
      CommitOutcomeUnknown,
    );
    // tenantInOneTrip(): the message is the whole transaction, committed at its Sync.
    failNextCommit(t, db, { how: 'lost', commits: /points_multipliers/ });
    await assert.rejects(db.tenantInOneTrip(tenant.tenantId, [insert('one-trip')]), CommitOutcomeUnknown);
    assert.equal(runs, 2, 'each transaction ran once');
    assert.equal(await rows(), before + 3, 'each one committed');

    // Refused by the database: an error of its own, nothing committed.
    failNextCommit(t, db, { how: 'refused', after: /points_multipliers/ });
    await assert.rejects(
      db.tenant(tenant.tenantId, async (tx) => {
        const { text, values } = insert('refused');
        await tx.query(text, values as unknown[]);
      }),
      (error: unknown) => !(error instanceof CommitOutcomeUnknown) && /could not serialize the commit/.test((error as Error).message),
    );
    assert.equal(await rows(), before + 3, 'the refused one committed nothing');
    await svc.sql("DELETE FROM points_multipliers WHERE tenant_id = $1 AND id LIKE 'pmul_lost_%'", [tenant.tenantId]);
  });

  await t.test('a route whose Idempotency-Key is kept apart: 503, then 409 IDEMPOTENCY_KEY_ABANDONED for its key', async (t) => {
    failNextCommit(t, db, { how: 'lost', after: /INSERT INTO points_multipliers/ });
    const create = () => svc.request('POST', '/api/v1/admin/points/multipliers', { key: tenant.apiKey, headers: { 'idempotency-key': 'lost-1' }, body: multiplier });
    const first = await create();
    assert.equal(first.status, 503, first.text);
    assert.equal(first.body.code, 'COMMIT_OUTCOME_UNKNOWN');
    assert.equal(
      first.body.detail,
      'the connection to the database was lost while the change was being committed, so it may or may not have been recorded: ' +
        'read the resource before repeating the request (a repeat with the same idempotency key is never applied twice)',
    );
    assert.equal(await multipliers(), 1, 'the commit went through');
    const repeat = await create();
    assert.equal(repeat.status, 409, repeat.text);
    assert.equal(repeat.body.code, 'IDEMPOTENCY_KEY_ABANDONED');
    assert.equal(await multipliers(), 1, 'the repeat was not run');
  });

  await t.test("a key's own claim whose COMMIT is lost: 503, nothing created, and the claim released so that the repeat runs, once", async (t) => {
    failNextCommit(t, db, { how: 'lost', after: /idempotency_keys/ });
    const create = () => svc.request('POST', '/api/v1/admin/points/multipliers', { key: tenant.apiKey, headers: { 'idempotency-key': 'claim-lost' }, body: multiplier });
    const first = await create();
    assert.equal(first.status, 503, first.text);
    assert.equal(first.body.code, 'COMMIT_OUTCOME_UNKNOWN');
    assert.equal(await multipliers(), 1, 'the request did not run');
    const repeat = await create();
    assert.equal(repeat.status, 201, repeat.text);
    assert.equal(await multipliers(), 2);
    assert.equal((await create()).headers.get('idempotent-replayed'), 'true');
    assert.equal(await multipliers(), 2);
  });

  await t.test('a COMMIT the database refused releases the key: the repeat runs, once', async (t) => {
    failNextCommit(t, db, { how: 'refused', after: /INSERT INTO points_multipliers/ });
    const create = () => svc.request('POST', '/api/v1/admin/points/multipliers', { key: tenant.apiKey, headers: { 'idempotency-key': 'refused-1' }, body: multiplier });
    const first = await create();
    assert.equal(first.status, 500, first.text);
    assert.equal(await multipliers(), 2, 'nothing committed');
    const repeat = await create();
    assert.equal(repeat.status, 201, repeat.text);
    assert.equal((await create()).headers.get('idempotent-replayed'), 'true');
    assert.equal(await multipliers(), 3);
  });

  await t.test('a grant whose key lives in its own transaction (one trip): 503, then the first answer for its key', async (t) => {
    const grant = { participant_id: 'ada', amount: 40, reason: 'bonus', idempotency_key: 'grant-lost' };
    failNextCommit(t, db, { how: 'lost', commits: /idempotency_keys/ });
    const first = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: grant });
    assert.equal(first.status, 503, first.text);
    assert.equal(first.body.code, 'COMMIT_OUTCOME_UNKNOWN');
    const repeat = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: grant });
    assert.equal(repeat.status, 200, repeat.text);
    assert.equal(repeat.body.duplicate, true, 'the grant had committed');
    assert.equal(repeat.body.available, 40, 'granted once');
  });
});
