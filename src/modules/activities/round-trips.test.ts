import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import type { Database } from '../../platform/db.js';
import { ALWAYS_TEN_POINTS, complete, createEngagement, createReward, session, wheel } from '../engagements/testing.js';
import { contestDefinition } from '../contests/testing.js';
import { advanceContest } from '../contests/service.js';
import { completeMany } from './completion.js';
import { seedParticipantWithPoints } from '../points/testing.js';
import { completionOutcomesUnknown } from '../../platform/metrics.js';
import { failNextCommit, interceptQueries } from '../../../test/database-faults.js';

/** A round trip: its text (an extended message's statements joined by `;\n`) and how many statements it carried. */
interface Trip {
  text: string;
  statements: number;
}

/**
 * What the application pool's connections send to the database until the
 * test ends: one entry per round trip (a message of several statements is one
 * `query`).
 */
function recordRoundTrips(t: TestContext, db: Database): () => Trip[] {
  const sent: Trip[] = [];
  interceptQueries(t, db, (first, send) => {
    sent.push(typeof first === 'string' ? { text: first, statements: 1 } : { text: String(first.text), statements: first.statements?.length ?? 1 });
    return send();
  });
  return () => sent;
}

/** Each points action of a completion's answer as [source, points awarded, new balance]. */
const pointsOf = (actions: Array<{ source: string; points_awarded?: number; new_balance?: number }>) => actions.map((a) => [a.source, a.points_awarded, a.new_balance]);

/** A new participant's spin through HTTP, answered 200, and the round trips it took. */
async function spinRecorded(t: TestContext, svc: TestService, tenant: TestTenant, engagementId: string) {
  const s = await session(svc, tenant, engagementId);
  const sent = recordRoundTrips(t, svc.service.db);
  const done = await complete(svc, s, 'wheel1', 'spin_wheel');
  assert.equal(done.status, 200, done.text);
  return { s, sent, done };
}

/** A service, a tenant and a published wheel of one spin each that always gives 10 points, and 1 point on completion. */
async function tenSpinWheel(t: TestContext) {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, {
    activities: [wheel({ max_attempts: 1, segments: ALWAYS_TEN_POINTS, on_completion: [{ type: 'award_points', amount: 1, reason: 'spun' }] })],
  });
  return { svc, tenant, engagement };
}

/** Twelve new participants' spins completed as one batch (`completeMany`), and the round trips they took. */
async function twelveSpins(t: TestContext, svc: TestService, tenant: TestTenant, engagementId: string) {
  const sessions = await Promise.all(Array.from({ length: 12 }, () => session(svc, tenant, engagementId)));
  const calls = sessions.map((s) => ({
    session: { tenantId: tenant.tenantId, participantId: s.participantId, engagementId },
    activityId: 'wheel1',
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: 'spin_wheel' as const },
  }));
  const sent = recordRoundTrips(t, svc.service.db);
  const outcomes = await completeMany(svc.service.db, calls);
  const trips = sent();
  return { sessions, outcomes, trips, listing: trips.map(({ text }, i) => `${i + 1}. ${text.replace(/\s+/g, ' ').slice(0, 100)}`).join('\n') };
}

test("a first spin's round trips: the activity with BEGIN, the draw's reads and the batch questions with the take, the prize and the completion's points together, the record with COMMIT", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const coupon = await createReward(svc, tenant, { id: 'spin-coupon', name: '5% off', type: 'coupon', metadata: { discount_percent: 5 } });
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        max_attempts: 1,
        // The coupon's segment can never be drawn (inventory 0), but the wheel's draw still reads its stock and the reward.
        segments: [
          { label: '10 points', prize_type: 'points', prize_value: 10, weight: 1 },
          { label: '5% off', prize_type: 'reward', reward_id: coupon.id, weight: 1, inventory: 0 },
        ],
        on_completion: [{ type: 'award_points', amount: 1, reason: 'spun' }],
      }),
    ],
  });
  const { sent, done } = await spinRecorded(t, svc, tenant, engagement.id);
  assert.deepEqual(
    pointsOf(done.body.actions_executed),
    [
      ['prize', 10, 10],
      ['on_completion', 1, 11],
    ],
  );
  const trips = sent();
  const listing = trips.map(({ text }, i) => `${i + 1}. ${text.replace(/\s+/g, ' ').slice(0, 100)}`).join('\n');
  // Four round trips: with no open enrollment and no contest counting the fact, the fact handlers read nothing.
  assert.equal(trips.length, 4, listing);
  const [begin, take, grants, record] = trips.map(({ text }) => text);
  assert.match(begin, /^BEGIN;[\s\S]*engagement_activities/, 'the activity is read with BEGIN');
  // PostgreSQL's own choice between custom and generic plans flipped between runs of the spins benchmark (0.27 ms of
  // planning per grant when it chose custom plans): the completion fixes it (docs/decisions/foundation.md).
  assert.match(begin, /set_config\('plan_cache_mode', 'force_generic_plan', true\)/, "the completion's statements are planned once per connection");
  for (const read of ['activity_participations', 'spin_segment_awards', 'reward_codes', 'challenge_enrollments', 'contests']) {
    assert.ok(take.includes(read), `the take's trip reads ${read} too\n${listing}`);
  }
  assert.ok(grants.includes('points_ledger'), `the third trip grants\n${listing}`);
  assert.equal(trips[2].statements, 2, `the prize and the completion's points: two grants in one trip\n${listing}`);
  for (const part of ['activity_attempts', 'outbox_events', 'COMMIT']) assert.ok(record.includes(part), `the record's trip holds ${part}\n${listing}`);
});

test('a spin that a contest and a challenge count: the answers read with the take let both apply it', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        max_attempts: 1,
        // Every spin lands on segment 1, which the contest scores as 1 × 5.
        segments: ALWAYS_TEN_POINTS,
      }),
    ],
  });
  const s = await session(svc, tenant, engagement.id);
  const contest = contestDefinition('spins', { starts_at: new Date(Date.now() - 60_000).toISOString(), scoring: { event_type: 'activity_completed', score_attribute: 'segment_index', weight: 5 } });
  assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key: tenant.apiKey, body: contest })).status, 201);
  assert.equal((await svc.request('POST', '/api/v1/admin/contests/spins/publish', { key: tenant.apiKey })).status, 200);
  assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'spins'), 'active');
  const entered = await svc.request('POST', '/api/v1/admin/contests/spins/entries', { key: tenant.apiKey, body: { participant_id: s.participantId } });
  assert.equal(entered.status, 201, entered.text);
  const challenge = await svc.request('POST', '/api/v1/admin/challenges', {
    key: tenant.apiKey,
    body: {
      name: 'Spin once',
      starts_at: new Date(Date.now() - 3_600_000).toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
      status: 'active',
      objectives: [{ id: 'spin', name: 'Spin the wheel', evaluator: 'activity_count', activity_type: 'spin_wheel', target: 1 }],
    },
  });
  assert.equal(challenge.status, 201, challenge.text);
  const q = `session_id=${s.sessionId}&engagement_id=${s.engagementId}`;
  const enrolled = await svc.request('POST', `/api/v1/public/challenges/${challenge.body.id}/enroll`, { body: { session_id: s.sessionId, engagement_id: s.engagementId } });
  assert.equal(enrolled.status, 201, enrolled.text);

  const sent = recordRoundTrips(t, svc.service.db);
  const done = await complete(svc, s, 'wheel1', 'spin_wheel');
  assert.equal(done.status, 200, done.text);
  assert.equal(done.body.result.segment_index, 1);
  const trips = sent();
  assert.ok(trips.some(({ text }) => text.includes('contest_score_events')) && trips.some(({ text }) => text.includes('challenge_enrollments')), 'both handlers read');
  const [entry] = await svc.sql('SELECT score, score_events FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2', [tenant.tenantId, 'spins']);
  assert.deepEqual([Number(entry.score), Number(entry.score_events)], [5, 1]);
  const progress = await svc.request('GET', `/api/v1/public/challenges/${challenge.body.id}/progress?${q}`);
  assert.equal(progress.status, 200, progress.text);
  assert.deepEqual(progress.body.objectives, [{ id: 'spin', current: 1, target: 1, completed: true }]);
});

test("a batch of first spins: four round trips however many spins, the takes in one statement, the points in one per round and the records in one, each spin's answer its own", async (t) => {
  const { svc, tenant, engagement } = await tenSpinWheel(t);
  const { sessions, outcomes, trips, listing } = await twelveSpins(t, svc, tenant, engagement.id);
  assert.equal(trips.length, 4, listing);
  // The twelve takes are one statement (a batch's participants are distinct), with the draw's reads and the batch questions.
  assert.equal((trips[1].text.match(/INSERT INTO activity_participations/g) ?? []).length, 1, `the twelve takes travel as one statement\n${listing}`);
  assert.ok(trips[1].statements < 12, `the twelve takes travel as one statement\n${listing}`);
  // Every spin's prize in one statement, every spin's on-completion points in a second (a participant's balance changes once per statement).
  assert.equal(trips[2].statements, 2, `every spin's points travel together, in two statements\n${listing}`);
  // Every spin's attempt and fact recorded in one statement, the events in a second, with the COMMIT.
  assert.equal(trips[3].statements, 3, `the records travel together, in one statement beside the events', and the COMMIT\n${listing}`);
  for (const [i, outcome] of outcomes.entries()) {
    assert.ok('response' in outcome, String((outcome as { error: unknown }).error));
    const { actions_executed: executed, attempt_id: attemptId } = outcome.response;
    assert.deepEqual(executed, [
      { type: 'award_points', source: 'prize', points_awarded: 10, new_balance: 10 },
      { type: 'award_points', source: 'on_completion', points_awarded: 1, new_balance: 11 },
    ]);
    const [attempt] = await svc.sql('SELECT participant_id, status, response FROM activity_attempts WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, attemptId]);
    assert.deepEqual([attempt.participant_id, attempt.status], [sessions[i].participantId, 'completed']);
    assert.deepEqual(attempt.response, outcome.response, 'the stored answer is the one given');
  }
});

test("a crowd's next batches: the activity this process knows, the takes with BEGIN and the read that confirms it, three round trips", async (t) => {
  const { svc, tenant, engagement } = await tenSpinWheel(t);
  // The first completion reads the activity with BEGIN; this process knows it from then on.
  assert.equal((await complete(svc, await session(svc, tenant, engagement.id), 'wheel1', 'spin_wheel')).status, 200);
  const { outcomes, trips, listing } = await twelveSpins(t, svc, tenant, engagement.id);
  assert.equal(trips.length, 3, listing);
  for (const part of ['engagement_activities', 'activity_participations', 'spin_segment_awards', 'challenge_enrollments']) {
    assert.ok(trips[0].text.startsWith('BEGIN') && trips[0].text.includes(part), `the first trip holds ${part}\n${listing}`);
  }
  assert.ok(trips[1].text.includes('points_ledger'), `the second trip grants\n${listing}`);
  assert.ok(trips[2].text.includes('activity_attempts') && trips[2].text.includes('COMMIT'), `the third trip records and commits\n${listing}`);
  for (const outcome of outcomes) {
    assert.ok('response' in outcome, String((outcome as { error: unknown }).error));
    assert.deepEqual(
      pointsOf(outcome.response.actions_executed),
      [
        ['prize', 10, 10],
        ['on_completion', 1, 11],
      ],
    );
  }
  // A call's own checks are made against the known activity: the wrong type is refused, and nothing is taken.
  const s = await session(svc, tenant, engagement.id);
  const wrong = await complete(svc, s, 'wheel1', 'quiz');
  assert.equal(wrong.body.code, 'ACTIVITY_TYPE_MISMATCH', wrong.text);
  assert.equal((await svc.sql('SELECT count(*)::int AS n FROM activity_participations WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]))[0].n, 0);
});

test('a wheel published again after this process read it: the batch begun on the old one rolls back, and the new one runs', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const spun = (amount: number) => [wheel({ max_attempts: 1, segments: ALWAYS_TEN_POINTS, on_completion: [{ type: 'award_points', amount, reason: 'spun' }] })];
  const engagement = await createEngagement(svc, tenant, { activities: spun(1) });
  assert.equal((await complete(svc, await session(svc, tenant, engagement.id), 'wheel1', 'spin_wheel')).status, 200);
  const edited = await svc.request('PATCH', `/api/v1/admin/engagements/${engagement.id}`, { key: tenant.apiKey, body: { activities: spun(5) } });
  assert.equal(edited.status, 200, edited.text);
  assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${engagement.id}/publish`, { key: tenant.apiKey })).status, 200);

  const { s, sent, done } = await spinRecorded(t, svc, tenant, engagement.id);
  assert.deepEqual(
    pointsOf(done.body.actions_executed),
    [
      ['prize', 10, 10],
      ['on_completion', 5, 15],
    ],
  );
  const trips = sent().map(({ text }) => text);
  const listing = trips.map((text, i) => `${i + 1}. ${text.replace(/\s+/g, ' ').slice(0, 100)}`).join('\n');
  assert.ok(trips[0].includes('activity_participations'), `the take went with the read\n${listing}`);
  assert.ok(trips.includes('ROLLBACK'), `and was rolled back\n${listing}`);
  // Then the usual four, the activity read first.
  assert.equal(trips.length - trips.indexOf('ROLLBACK') - 1, 4, listing);
  const [participation] = await svc.sql('SELECT attempts_used FROM activity_participations WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
  assert.equal(participation.attempts_used, 1, 'the rolled-back take counts no attempt');
  const attempts = await svc.sql('SELECT status FROM activity_attempts WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
  assert.deepEqual(attempts.map((a) => a.status), ['completed']);
  // The next completion runs on the activity as published now, known again: three round trips.
  const another = await session(svc, tenant, engagement.id);
  const before = sent().length;
  assert.equal((await complete(svc, another, 'wheel1', 'spin_wheel')).body.actions_executed[1].points_awarded, 5);
  assert.equal(sent().length - before, 3, listing);
});

test("a spin whose points would take a balance above its limit: 422 POINTS_BALANCE_LIMIT, and the spin wrote nothing", async (t) => {
  const { svc, tenant, engagement } = await tenSpinWheel(t);
  await seedParticipantWithPoints(svc, tenant.tenantId, 'whale', Number.MAX_SAFE_INTEGER - 5);
  const s = await session(svc, tenant, engagement.id, 'whale');
  const refused = await complete(svc, s, 'wheel1', 'spin_wheel');
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.code, 'POINTS_BALANCE_LIMIT');
  const written = await svc.sql(
    `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND participant_id = $2) AS attempts,
            (SELECT coalesce(sum(attempts_used), 0)::int FROM activity_participations WHERE tenant_id = $1 AND participant_id = $2) AS taken,
            (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2 AND source_kind = 'activity') AS entries`,
    [tenant.tenantId, s.participantId],
  );
  assert.deepEqual(written, [{ attempts: 0, taken: 0, entries: 0 }]);
});

/** New participants' spins of `engagementId`'s wheel as calls of one batch. */
async function spinCalls(svc: TestService, tenant: TestTenant, engagementId: string, count: number) {
  const sessions = await Promise.all(Array.from({ length: count }, () => session(svc, tenant, engagementId)));
  return sessions.map((s) => ({
    session: { tenantId: tenant.tenantId, participantId: s.participantId, engagementId },
    activityId: 'wheel1',
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: 'spin_wheel' as const },
  }));
}

/** The completed attempts of the participants of `calls`. */
async function completedAttempts(svc: TestService, tenant: TestTenant, calls: Array<{ session: { participantId: string } }>) {
  const [row] = await svc.sql(`SELECT count(*)::int AS n FROM activity_attempts WHERE tenant_id = $1 AND participant_id = ANY($2) AND status = 'completed'`, [
    tenant.tenantId,
    calls.map((call) => call.session.participantId),
  ]);
  return row.n as number;
}

test('a batch whose COMMIT message loses its answer is never run again: each call answers 503 COMPLETION_OUTCOME_UNKNOWN, and each spin was applied once', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  // Three spins each: a batch run again would be a second spin, not a refusal.
  const engagement = await createEngagement(svc, tenant, { activities: [wheel({ max_attempts: 3, segments: ALWAYS_TEN_POINTS })] });
  const db = svc.service.db;

  const unknownBefore = (await completionOutcomesUnknown.get()).values[0]?.value ?? 0;
  // The usual way (this process does not know the wheel yet), then the known one, then a lone spin through HTTP.
  for (const way of ['usual', 'known']) {
    const calls = await spinCalls(svc, tenant, engagement.id, 4);
    failNextCommit(t, db, { how: 'lost' });
    const outcomes = await completeMany(db, calls);
    for (const outcome of outcomes) {
      assert.ok('error' in outcome, `${way}: no call has an answer`);
      const error = outcome.error as { status?: number; code?: string };
      assert.deepEqual([error.status, error.code], [503, 'COMPLETION_OUTCOME_UNKNOWN'], `${way}: ${String(outcome.error)}`);
    }
    assert.equal(await completedAttempts(svc, tenant, calls), 4, `${way}: the commit went through, and no spin ran twice`);
  }
  // The lone spin names an Idempotency-Key: its claim commits first (on its own), then the completion's COMMIT is lost.
  const s = await session(svc, tenant, engagement.id);
  failNextCommit(t, db, { how: 'lost', after: /activity_attempts/ });
  const spin = () => svc.request('POST', '/api/v1/activities/wheel1/complete-with-actions', {
    headers: { 'idempotency-key': 'spin-lost' },
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: 'spin_wheel' },
  });
  const lone = await spin();
  assert.equal(lone.status, 503, lone.text);
  assert.equal(lone.body.code, 'COMPLETION_OUTCOME_UNKNOWN');
  assert.match(lone.body.detail, /may or may not have been recorded: read the activity's attempts_used \(GET \/activities\/\{activityId\}\/eligibility\)/);
  assert.equal(await completedAttempts(svc, tenant, [{ session: s }]), 1);
  // A repeat of its key is told the outcome is unknown; it is not run a second time (the key is not released as a 5xx's is).
  const repeat = await spin();
  assert.equal(repeat.status, 409, repeat.text);
  assert.equal(repeat.body.code, 'IDEMPOTENCY_KEY_ABANDONED');
  assert.match(repeat.body.detail, /whether it took effect is unknown: read the resource, then retry with a new key/);
  assert.equal(await completedAttempts(svc, tenant, [{ session: s }]), 1);
  assert.equal(((await completionOutcomesUnknown.get()).values[0]?.value ?? 0) - unknownBefore, 9, 'each call counted once (4 + 4 + 1)');
});

test('a batch whose COMMIT the database refuses committed nothing: its calls go again one by one, and each spin is applied once', async (t) => {
  const { svc, tenant, engagement } = await tenSpinWheel(t);
  const db = svc.service.db;
  const calls = await spinCalls(svc, tenant, engagement.id, 4);
  failNextCommit(t, db, { how: 'refused' });
  const outcomes = await completeMany(db, calls);
  for (const outcome of outcomes) {
    assert.ok('response' in outcome, String((outcome as { error: unknown }).error));
    assert.deepEqual(pointsOf(outcome.response.actions_executed), [
      ['prize', 10, 10],
      ['on_completion', 1, 11],
    ]);
  }
  assert.equal(await completedAttempts(svc, tenant, calls), 4);
});
