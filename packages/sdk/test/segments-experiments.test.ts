import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.ts';
import { createLoyaltyClient, LoyaltyBadRequestError } from '@loyalty/sdk';

/**
 * Segments and experiments (issue 36) as an integrator uses them through the
 * SDK, against a running service: a segment previewed, saved, sized and
 * listed; a bulk grant to it dry-run first; an experiment of two rules
 * started, events sent, its results read; a refusal read field by field.
 */
test('the SDK: segments and experiments end to end', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ requestsPerMinute: null });
  const client = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey });
  for (const [index, participant] of ['ann', 'bob', 'cyd'].entries()) {
    await client.points.grant({ body: { participant_id: participant, amount: 100 * (index + 1), reason: 'seed' } });
  }
  const filter = { all: [{ fact: 'lifetime_points', operator: 'gte' as const, value: 200 }] };

  await t.test('a segment: previewed, saved, sized, listed, its members read; a grant to it dry-run first', async () => {
    const preview = await client.segments.preview({ body: { filter } });
    assert.equal(preview.size, 2);
    assert.deepEqual(preview.sample.map((p) => p.participant_id).sort(), ['bob', 'cyd']);
    const saved = await client.segments.create({ body: { name: 'Savers', filter } });
    assert.match(saved.id, /^seg_[0-9a-f]{32}$/);
    assert.equal((await client.segments.getSize({ path: { segment_id: saved.id } })).size, 2);
    const { segments } = await client.segments.list();
    assert.deepEqual(segments.map((s) => s.name), ['Savers']);
    const members = await client.segments.listMembers({ path: { segment_id: saved.id } });
    assert.deepEqual(members.members.map((m) => m.participant_id), ['bob', 'cyd']);
    const dryRun = await client.points.grantToSegment({ body: { segment_id: saved.id, amount: 5, reason: 'thanks', dry_run: true } });
    assert.ok('dry_run' in dryRun, 'a dry run answers the count, not a job');
    assert.deepEqual({ participants: dryRun.participants, points: dryRun.points }, { participants: 2, points: 10 });
  });

  await t.test('a refusal names each field', async () => {
    const error = await client.segments
      .preview({ body: { filter: { all: [{ fact: 'event_count', event_name: 'purchase', operator: 'gte', value: 3 }] } } })
      .then(() => assert.fail('an event count without its window is refused'), (caught: unknown) => caught);
    assert.ok(error instanceof LoyaltyBadRequestError);
    assert.deepEqual(error.errors.map((e) => e.path), ['/filter/all/0/within_days']);
  });

  await t.test('an experiment of two rules: created, started, events sent, results read', async () => {
    const ruleA = await client.earnRules.create({ body: { name: 'ten', event_name: 'order', status: 'active', effects: [{ type: 'award_points', points: 10 }] } });
    const ruleB = await client.earnRules.create({ body: { name: 'twenty', event_name: 'order', status: 'draft', effects: [{ type: 'award_points', points: 20 }] } });
    const experiment = await client.experiments.create({
      body: {
        name: 'ten or twenty',
        subject_type: 'rule',
        variants: [
          { key: 'a', name: 'Ten', subject_id: ruleA.id, allocation_percent: 50 },
          { key: 'b', name: 'Twenty', subject_id: ruleB.id, allocation_percent: 50 },
        ],
        goal: { type: 'event_count', event_name: 'order' },
      },
    });
    assert.equal(experiment.status, 'draft');
    assert.equal((await client.experiments.start({ path: { experiment_id: experiment.id } })).status, 'running');
    // The first order exposes each buyer; the goal counts what they do after it: one more order each.
    for (const round of [1, 2]) {
      for (let i = 0; i < 20; i++) await client.eventIngestion.ingestSync({ body: { event_name: 'order', participant_id: `buyer-${i}`, idempotency_key: `order-${i}-${round}` } });
    }
    const results = await client.experiments.getResults({ path: { experiment_id: experiment.id } });
    assert.deepEqual(results.variants.map((v) => v.key), ['a', 'b']);
    assert.equal(results.variants.reduce((sum, v) => sum + v.exposed, 0), 20);
    for (const variant of results.variants) assert.equal(variant.goal_per_participant, variant.exposed > 0 ? 1 : 0);
  });
});
