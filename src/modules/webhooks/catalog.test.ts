import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from '../../../test/helper.js';
import { CATALOG, validateEventData } from './catalog.js';

/**
 * The catalog holds exactly the 27 events of the contract, and every event
 * the code emits validates against its published schema.
 */
const CONTRACT: Array<[string, 'active' | 'deferred', string[]]> = [
  ['points.awarded.v1', 'active', ['amount', 'available', 'lifetime', 'reason', 'ledger_entry_id', 'source_kind', 'multiplier']],
  ['points.deducted.v1', 'active', ['amount', 'available', 'lifetime', 'reason', 'ledger_entry_id']],
  ['reward.points_expired.v1', 'active', ['expired_points', 'available', 'lifetime']],
  ['points.expiring.v1', 'active', ['points', 'expires_at', 'days_before']],
  ['tier.changed.v1', 'active', ['previous_tier', 'tier', 'lifetime']],
  ['badge.earned.v1', 'active', ['badge_code', 'badge_name', 'earned_at']],
  ['streak.continued.v1', 'active', ['streak_code', 'current_length', 'longest_length']],
  ['streak.broken.v1', 'active', ['streak_code', 'previous_length']],
  ['reward.claimed.v1', 'active', ['reward_id', 'claim_id', 'reward_type', 'code']],
  ['reward.expired.v1', 'deferred', ['reward_id', 'claim_id', 'expired_at']],
  ['game.completed', 'deferred', ['activity_id']],
  ['activity.completed', 'active', ['activity_id', 'activity_type', 'fact_id']],
  ['quiz.completed', 'active', ['activity_id', 'score', 'passed', 'fact_id']],
  ['challenge.enrolled.v1', 'active', ['challenge_id', 'enrolled_at']],
  ['challenge.milestone_reached.v1', 'active', ['challenge_id', 'milestone', 'threshold']],
  ['challenge.completed.v1', 'active', ['challenge_id', 'completed_at', 'score']],
  ['referral.converted.v1', 'active', ['referrer_id', 'conversion_id', 'code', 'referred_session_id']],
  ['contest.completed.v1', 'active', ['contest_id', 'completed_at', 'total_entries']],
  ['contest.prize_allocated.v1', 'active', ['contest_id', 'rank', 'reward_type', 'reward_value', 'prize_code']],
  ['fraud.velocity_breach', 'active', ['contest_id', 'cap', 'limit', 'observed', 'history']],
  ['fraud.suspicious_rank_jump', 'active', ['contest_id', 'from_rank', 'to_rank', 'window_minutes']],
  ['fraud.review_required', 'active', ['contest_id', 'entry_id', 'reason']],
  ['reward.disqualified', 'active', ['contest_id', 'entry_id', 'reason']],
  ['participant.anonymized.v1', 'active', ['anonymized_at', 'row_counts']],
  ['participant.deleted.v1', 'active', ['deleted_at']],
  ['segment.entered.v1', 'active', ['segment_id', 'segment_name', 'at']],
  ['segment.left.v1', 'active', ['segment_id', 'segment_name', 'at']],
];

const NOW = '2026-11-21T12:00:00.000Z';
/** A payload per event, built from the contract, for the emitters not on main yet. */
const SAMPLES: Record<string, Record<string, unknown>> = {
  'points.awarded.v1': { participant_id: 'p', amount: 10, available: 10, lifetime: 10, reason: 'r', ledger_entry_id: 'led_1', source_kind: 'grant', multiplier: null },
  'points.deducted.v1': { participant_id: 'p', amount: 5, available: 5, lifetime: 10, reason: 'r', ledger_entry_id: 'led_2' },
  'reward.points_expired.v1': { participant_id: 'p', expired_points: 5, available: 0, lifetime: 10 },
  'points.expiring.v1': { participant_id: 'p', points: 5, expires_at: NOW, days_before: 30 },
  'tier.changed.v1': { participant_id: 'p', previous_tier: null, tier: 'gold', lifetime: 1000 },
  'badge.earned.v1': { participant_id: 'p', badge_code: 'first', badge_name: 'First', earned_at: NOW },
  'streak.continued.v1': { participant_id: 'p', streak_code: 'daily', current_length: 3, longest_length: 5 },
  'streak.broken.v1': { participant_id: 'p', streak_code: 'daily', previous_length: 3 },
  'reward.claimed.v1': { participant_id: 'p', reward_id: 'rw', claim_id: 'cl', reward_type: 'coupon', code: null },
  'reward.expired.v1': { participant_id: 'p', reward_id: 'rw', claim_id: 'cl', expired_at: NOW },
  'game.completed': { participant_id: 'p', activity_id: 'a' },
  'activity.completed': { participant_id: 'p', activity_id: 'a', activity_type: 'spin_wheel', fact_id: 'fct_1' },
  'quiz.completed': { participant_id: 'p', activity_id: 'a', score: 80, passed: true, fact_id: 'fct_2' },
  'challenge.enrolled.v1': { participant_id: 'p', challenge_id: 'c', enrolled_at: NOW },
  'challenge.milestone_reached.v1': { participant_id: 'p', challenge_id: 'c', milestone: 'half', threshold: 0.5 },
  'challenge.completed.v1': { participant_id: 'p', challenge_id: 'c', completed_at: NOW, score: 100 },
  'referral.converted.v1': { participant_id: 'p', referrer_id: 'p', conversion_id: 'cv', code: 'ABC', referred_session_id: 's' },
  'contest.completed.v1': { participant_id: null, contest_id: 'k', completed_at: NOW, total_entries: 12 },
  'contest.prize_allocated.v1': { participant_id: 'p', contest_id: 'k', rank: 1, reward_type: 'voucher', reward_value: 50, prize_code: 'PRZ' },
  'fraud.velocity_breach': { participant_id: 'p', contest_id: 'k', cap: 'per_minute', limit: 100, observed: 250, history: [{ at: NOW, score: 250 }] },
  'fraud.suspicious_rank_jump': { participant_id: 'p', contest_id: 'k', from_rank: 90, to_rank: 2, window_minutes: 60 },
  'fraud.review_required': { participant_id: 'p', contest_id: 'k', entry_id: 'e', reason: 'review_threshold_score' },
  'reward.disqualified': { participant_id: 'p', contest_id: 'k', entry_id: 'e', reason: 'velocity' },
  'participant.anonymized.v1': { participant_id: 'p', anonymized_at: NOW, row_counts: { participants: 1, sessions: 2 } },
  'participant.deleted.v1': { participant_id: 'p', deleted_at: NOW },
  'segment.entered.v1': { participant_id: 'p', segment_id: 'seg_0f8fad5bd9cb469fa16570867728950e', segment_name: 'Frequent buyers', at: NOW },
  'segment.left.v1': { participant_id: 'p', segment_id: 'seg_0f8fad5bd9cb469fa16570867728950e', segment_name: 'Frequent buyers', at: NOW },
};

const modulesDir = path.resolve(import.meta.dirname, '..');

test('catalog: /.well-known/events.json publishes exactly the 27 events of the contract', async (t) => {
  const svc = await startTestService(t);
  const response = await svc.request('GET', '/.well-known/events.json');
  assert.equal(response.status, 200);
  const events = response.body.events as Array<{ name: string; status: string; kind: string; legacy: boolean; frozen: boolean; description: string; personal_data: string[]; schema: { required: string[]; properties: Record<string, unknown> } }>;
  assert.equal(events.length, 27);
  assert.deepEqual(events.map((e) => e.name).sort(), CONTRACT.map(([name]) => name).sort());
  for (const [name, status, fields] of CONTRACT) {
    const entry = events.find((e) => e.name === name)!;
    assert.equal(entry.status, status, name);
    assert.ok(entry.kind && entry.description, name);
    assert.deepEqual(entry.personal_data, [], `${name} carries ids only`);
    for (const field of fields) assert.ok(entry.schema.required.includes(field), `${name} requires ${field}`);
    const participantRequired = name !== 'contest.completed.v1';
    assert.equal(entry.schema.required.includes('participant_id'), participantRequired, `${name} participant_id`);
  }
  for (const legacy of ['activity.completed', 'quiz.completed', 'game.completed']) {
    const entry = events.find((e) => e.name === legacy)!;
    assert.equal(entry.legacy, true);
    assert.equal(entry.frozen, true);
  }
  assert.deepEqual(events.filter((e) => e.status === 'deferred').map((e) => e.name).sort(), ['game.completed', 'reward.expired.v1']);
  assert.ok(events.filter((e) => e.name.endsWith('.v1')).every((e) => !e.legacy), 'versioned events are not legacy');
});

test('catalog: every payload the contract describes validates, and a payload missing a required field does not', () => {
  for (const entry of CATALOG) {
    const sample = SAMPLES[entry.name];
    assert.ok(sample, `a sample for ${entry.name}`);
    assert.deepEqual(validateEventData(entry.name, sample), [], entry.name);
    for (const field of entry.schema.required as string[]) {
      const { [field]: _removed, ...missing } = sample;
      assert.notDeepEqual(validateEventData(entry.name, missing), [], `${entry.name} without ${field}`);
    }
  }
  assert.notDeepEqual(validateEventData('points.awarded.v1', { ...SAMPLES['points.awarded.v1'], amount: 'ten' }), []);
  assert.notDeepEqual(validateEventData('fraud.velocity_breach', { ...SAMPLES['fraud.velocity_breach'], cap: 'per_day' }), []);
  assert.deepEqual(validateEventData('no.such.event', {}), ['"no.such.event" is not in the event catalog']);
});

test('catalog: the events the code on main emits validate against their schemas', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const pointsOnMain = fs.existsSync(path.join(modulesDir, 'points', 'index.ts'));
  if (pointsOnMain) {
    const grant = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: 'cat-1', amount: 50, reason: 'welcome', idempotency_key: 'catalog-1' } });
    assert.equal(grant.status, 200, grant.text);
    const deduct = await svc.request('POST', '/api/v1/gamify/points/deduct', { key: tenant.apiKey, body: { participant_id: 'cat-1', amount: 20, reason: 'redeem', idempotency_key: 'catalog-2' } });
    assert.equal(deduct.status, 200, deduct.text);
  }
  // Every event any module wrote in this database, whatever flows ran above.
  const emitted = await svc.sql<{ event: string; data: Record<string, unknown> }>('SELECT event, data FROM outbox_events WHERE tenant_id = $1', [tenant.tenantId]);
  if (pointsOnMain) {
    assert.ok(emitted.some((e) => e.event === 'points.awarded.v1'));
    assert.ok(emitted.some((e) => e.event === 'points.deducted.v1'));
  }
  for (const row of emitted) assert.deepEqual(validateEventData(row.event, row.data), [], `${row.event}: ${JSON.stringify(row.data)}`);
  const covered = new Set(emitted.map((e) => e.event));
  const fromSamples = CATALOG.filter((e) => e.status === 'active' && !covered.has(e.name)).map((e) => e.name);
  // The other events are checked where their modules' tests cause them: every test file's outbox is
  // checked against the catalog when it ends (test/helper.ts).
  t.diagnostic(`validated from this test's flows: ${[...covered].join(', ') || 'none'}; checked by the other test files' contract check: ${fromSamples.join(', ')}`);
});
