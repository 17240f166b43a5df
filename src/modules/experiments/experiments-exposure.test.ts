import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key, sendSync, waitProcessed } from '../ingestion/testing.js';
import { assignVariant } from './assignment.js';
import { assignments, pointsByParticipant, ruleExperiment, start } from './testing.js';

/** First exposure under concurrency, and allocation changes that move nobody. */
test('experiments: exposure under concurrency, allocation changes', async (t) => {
  // 400 events at once: above the default ingestion burst of 100 a second.
  const svc = await startTestService(t, { jobs: true, config: { RATE_LIMIT_INGEST_BURST_PER_SECOND: '10000' } });
  const tenant = await svc.createTenant({ requestsPerMinute: null });

  await t.test('200 new participants, two events each at once: one assignment row each and only their variant\'s points', async () => {
    const { id } = await ruleExperiment(svc, tenant, 'race_evt', { holdout: 10, pointsA: 10, pointsB: 20 });
    await start(svc, tenant, id);
    const people = Array.from({ length: 200 }, (_, i) => `race_${i}`);
    const answers = await Promise.all(people.flatMap((person) => [0, 1].map(() => sendSync(svc, tenant, { event_name: 'race_evt', participant_id: person }))));
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    const rows = await svc.sql<{ participant_id: string; n: number }>(
      'SELECT participant_id, count(*)::int AS n FROM experiment_assignments WHERE tenant_id = $1 AND experiment_id = $2 GROUP BY participant_id',
      [tenant.tenantId, id],
    );
    assert.equal(rows.length, 200);
    assert.ok(rows.every((r) => r.n === 1));
    const assigned = await assignments(svc, tenant, id);
    const points = await pointsByParticipant(svc, tenant, people);
    const perEvent: Record<string, number> = { a: 10, b: 20, holdout: 0 };
    for (const person of people) assert.equal(points.get(person) ?? 0, 2 * perEvent[assigned.get(person)!], `${person} (${assigned.get(person)}) got only their variant's points, twice`);
    const sources = await svc.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT participant_id FROM points_ledger WHERE tenant_id = $1 AND participant_id = ANY($2::text[]) GROUP BY participant_id HAVING count(DISTINCT source_id) > 1) x`,
      [tenant.tenantId, people],
    );
    assert.equal(sources[0].n, 0, 'nobody got points from two variants');
  });

  await t.test('events processed in batches (the asynchronous lane) give each participant their variant, recorded once', async () => {
    const { id } = await ruleExperiment(svc, tenant, 'lane_evt', { holdout: 20, pointsA: 10, pointsB: 20 });
    await start(svc, tenant, id);
    const people = Array.from({ length: 50 }, (_, i) => `lane_${i}`);
    // Each participant three times in one batch request: the lane processes many of them per transaction.
    const events = people.flatMap((person) => [0, 1, 2].map(() => ({ event_name: 'lane_evt', participant_id: person, idempotency_key: key('lane') })));
    const accepted = await svc.request('POST', '/api/v1/ingest/events/batch', { key: tenant.apiKey, body: { events } });
    assert.equal(accepted.status, 200, accepted.text);
    await waitProcessed(svc, accepted.body.results.map((r: { message_id: string }) => r.message_id), 60_000);
    const assigned = await assignments(svc, tenant, id);
    assert.equal(assigned.size, people.length);
    const points = await pointsByParticipant(svc, tenant, people);
    const perEvent: Record<string, number> = { a: 10, b: 20, holdout: 0 };
    for (const person of people) assert.equal(points.get(person) ?? 0, 3 * perEvent[assigned.get(person)!], `${person} (${assigned.get(person)})`);
  });

  await t.test('a change of allocation while running moves nobody already exposed; new participants follow the new split', async () => {
    const { id, body } = await ruleExperiment(svc, tenant, 'shift_evt', { pointsA: 10, pointsB: 20 });
    await start(svc, tenant, id);
    const early = Array.from({ length: 80 }, (_, i) => `shift_early_${i}`);
    for (const person of early) await sendSync(svc, tenant, { event_name: 'shift_evt', participant_id: person });
    const before = await assignments(svc, tenant, id);
    const shifted = await svc.request('PATCH', `/api/v1/admin/experiments/${id}`, {
      key: tenant.apiKey,
      body: { holdout_percent: 20, variants: body.variants.map((v: Record<string, unknown>, i: number) => ({ key: v.key, name: v.name, subject_id: v.subject_id, allocation_percent: i === 0 ? 70 : 10 })) },
    });
    assert.equal(shifted.status, 200, shifted.text);
    for (const person of early) await sendSync(svc, tenant, { event_name: 'shift_evt', participant_id: person });
    const late = Array.from({ length: 80 }, (_, i) => `shift_late_${i}`);
    for (const person of late) await sendSync(svc, tenant, { event_name: 'shift_evt', participant_id: person });
    const after = await assignments(svc, tenant, id);
    for (const person of early) assert.equal(after.get(person), before.get(person), `${person} stays`);
    const moved = early.filter((person) => assignVariant(id, person, 20, [{ key: 'a', allocation_percent: 70 }, { key: 'b', allocation_percent: 10 }]) !== before.get(person));
    assert.ok(moved.length > 0, 'the new split would have put some of them elsewhere');
    for (const person of late) assert.equal(after.get(person), assignVariant(id, person, 20, [{ key: 'a', allocation_percent: 70 }, { key: 'b', allocation_percent: 10 }]));
    const points = await pointsByParticipant(svc, tenant, early);
    const perEvent: Record<string, number> = { a: 10, b: 20, holdout: 0 };
    for (const person of early) assert.equal(points.get(person) ?? 0, 2 * perEvent[before.get(person)!]);
  });
});
