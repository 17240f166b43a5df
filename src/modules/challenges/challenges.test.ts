import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { grantPoints, participantSession, startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { recordFact } from './testing.js';
import { runLifecycle } from './service.js';
import challengesModule from './index.js';
import { parseCrontab } from 'graphile-worker';
import { readStatePart } from '../../platform/module.js';

test('the crontab lines parse and name tasks of the module', () => {
  const items = parseCrontab((challengesModule.crontab ?? []).join('\n'));
  assert.ok(items.length > 0);
  for (const item of items) assert.ok(challengesModule.tasks?.[item.task], item.task);
});

const HOUR = 3600_000;

function challengeBody(overrides: Record<string, unknown> = {}) {
  const now = clock.nowMs();
  return {
    name: 'Spring shopper',
    description: 'Buy twice and play once',
    starts_at: new Date(now - HOUR).toISOString(),
    ends_at: new Date(now + 24 * HOUR).toISOString(),
    status: 'active',
    objectives: [
      { id: 'buy', name: 'Two purchases of 50 or more', evaluator: 'event_count', event_name: 'purchase', target: 2, conditions: [{ property: 'order.total', op: 'gte', value: 50 }] },
      { id: 'play', name: 'Play a quiz', evaluator: 'activity_count', activity_type: 'quiz', target: 1 },
    ],
    milestones: [
      { name: 'halfway', threshold: 0.5 },
      { name: 'done', threshold: 1 },
    ],
    ...overrides,
  };
}

test('challenges', async (t) => {
  const svc = await startTestService(t);
  const db = svc.service.db;
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const engagementId = randomUUID();
  t.after(() => clock.reset());

  await t.test('bad definitions are refused with a detail and store nothing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp, string?]> = [
      [challengeBody({ objectives: [{ name: 'x', evaluator: 'event_count', target: 1 }] }), /needs event_name/, '/objectives/0/event_name'],
      [challengeBody({ ends_at: new Date(clock.nowMs() - 2 * HOUR).toISOString() }), /ends_at must be after starts_at/, '/ends_at'],
      [challengeBody({ objectives: [{ name: 'x', evaluator: 'nope', target: 1 }] }), /evaluator/],
      [challengeBody({ objectives: [{ name: 'x', evaluator: 'activity_count', target: 0 }] }), /target/],
      [challengeBody({ objectives: [{ name: 'x', evaluator: 'badge_earned', badge_code: 'vip', target: 3 }] }), /target 1/, '/objectives/0/target'],
      [challengeBody({ milestones: [{ name: 'a', threshold: 1.5 }] }), /threshold/],
      [challengeBody({ tenant_id: other.tenantId }), /not allowed/],
    ];
    for (const [body, detail, field] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/challenges', { key: tenant.apiKey, body });
      assert.equal(response.status, 400, response.text);
      assert.match(response.body.detail, detail);
      // A domain refusal names its field, so a form places it there.
      if (field) assert.ok(response.body.errors.some((e: { path: string }) => e.path === field), `${field}: ${response.text}`);
    }
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM challenges'))[0].n, 0);
  });

  await t.test('admin routes need an admin credential; other tenants get 404', async () => {
    assert.equal((await svc.request('POST', '/api/v1/admin/challenges', { body: challengeBody() })).status, 401);
    const jwt = await svc.login(tenant);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    assert.equal(ingestKey.status, 201, ingestKey.text);
    assert.equal((await svc.request('POST', '/api/v1/admin/challenges', { key: ingestKey.body.key, body: challengeBody() })).status, 403);
    const created = await svc.request('POST', '/api/v1/admin/challenges', { key: tenant.apiKey, body: challengeBody({ status: 'draft' }) });
    assert.equal(created.status, 201, created.text);
    assert.equal((await svc.request('GET', `/api/v1/admin/challenges/${created.body.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('PATCH', `/api/v1/admin/challenges/${created.body.id}`, { key: other.apiKey, body: { name: 'x' } })).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/challenges/${created.body.id}/archive`, { key: other.apiKey })).status, 404);
  });

  await t.test('status moves: draft → scheduled → active → ended → archived, each recorded', async () => {
    clock.freeze(clock.nowMs());
    const startsAt = new Date(clock.nowMs() + HOUR);
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key: tenant.apiKey,
      body: challengeBody({ status: 'draft', starts_at: startsAt.toISOString(), ends_at: new Date(clock.nowMs() + 3 * HOUR).toISOString() }),
    });
    assert.equal(created.body.status, 'draft');
    const id = created.body.id;
    const sessionId = await participantSession(svc, tenant, 'p-status', engagementId);
    // A draft is invisible to participants.
    const hidden = await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(hidden.status, 404);

    const published = await svc.request('POST', `/api/v1/admin/challenges/${id}/publish`, { key: tenant.apiKey });
    assert.equal(published.status, 200, published.text);
    assert.equal(published.body.status, 'scheduled');
    const early = await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(early.status, 422);
    assert.equal(early.body.code, 'CHALLENGE_NOT_STARTED');
    assert.match(early.body.detail, new RegExp(startsAt.toISOString()));
    assert.equal((await svc.request('POST', `/api/v1/admin/challenges/${id}/publish`, { key: tenant.apiKey })).status, 422);

    clock.advance(2 * HOUR);
    assert.equal(await runLifecycle(db), 1);
    const active = await svc.request('GET', `/api/v1/admin/challenges/${id}`, { key: tenant.apiKey });
    assert.equal(active.body.status, 'active');
    // Objectives are locked once participants can progress.
    const locked = await svc.request('PATCH', `/api/v1/admin/challenges/${id}`, { key: tenant.apiKey, body: { objectives: [{ name: 'x', evaluator: 'activity_count', target: 1 }] } });
    assert.equal(locked.status, 422);
    assert.equal(locked.body.code, 'CHALLENGE_NOT_EDITABLE');

    clock.advance(2 * HOUR);
    const late = await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(late.status, 422);
    assert.equal(late.body.code, 'CHALLENGE_ENDED');
    assert.equal(await runLifecycle(db), 1);
    const archived = await svc.request('DELETE', `/api/v1/admin/challenges/${id}`, { key: tenant.apiKey });
    assert.equal(archived.body.status, 'archived');
    assert.deepEqual(
      archived.body.status_moves.map((m: { from_status: string | null; to_status: string; moved_by: string }) => [m.from_status, m.to_status, m.moved_by.split(':')[0]]),
      [
        [null, 'draft', 'admin'],
        ['draft', 'scheduled', 'admin'],
        ['scheduled', 'active', 'lifecycle'],
        ['active', 'ended', 'lifecycle'],
        ['ended', 'archived', 'admin'],
      ],
    );
    assert.equal(archived.body.status_moves[2].moved_at, startsAt.toISOString());
    assert.equal((await svc.request('POST', `/api/v1/admin/challenges/${id}/archive`, { key: tenant.apiKey })).status, 422);
    clock.reset();
  });

  await t.test('enroll, progress from facts exactly once per fact, milestones and completion', async () => {
    const created = await svc.request('POST', '/api/v1/admin/challenges', { key: tenant.apiKey, body: challengeBody({ completion_points: 50 }) });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'active');
    assert.equal(created.body.completion_points, 50);
    const id = created.body.id;
    const sessionId = await participantSession(svc, tenant, 'p-1', engagementId, 'Ada');
    const q = `session_id=${sessionId}&engagement_id=${engagementId}`;

    const before = await svc.request('GET', `/api/v1/public/challenges?${q}`);
    assert.equal(before.status, 200, before.text);
    const listed = before.body.challenges.find((c: { id: string }) => c.id === id);
    assert.equal(listed.enrolled, false);
    assert.deepEqual(listed.objectives.map((o: { current: number; completed: boolean }) => [o.current, o.completed]), [[0, false], [0, false]]);

    // A fact before enrollment does not count.
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: 80 } } });

    const enrolled = await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(enrolled.status, 201, enrolled.text);
    assert.equal(enrolled.body.enrolled, true);
    assert.equal(enrolled.body.challenge_id, id);
    const again = await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'ALREADY_ENROLLED');

    const big = await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: 60 } } });
    await recordFact(db, tenant.tenantId, big); // the same fact again: no effect
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: 10 } } }); // below the condition
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'refund', properties: { order: { total: 99 } } }); // another event
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: 70 } }, evaluateChallenges: false });

    let progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.equal(progress.status, 200, progress.text);
    assert.deepEqual(progress.body.objectives, [
      { id: 'buy', current: 1, target: 2, completed: false },
      { id: 'play', current: 0, target: 1, completed: false },
    ]);
    assert.equal(progress.body.overall_progress, 0.25);
    assert.equal(progress.body.score, 25);
    assert.deepEqual(progress.body.milestones_reached, []);

    // An activity of another type does not count; a quiz does.
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'activity_completed', source: 'activity', activityId: 'wheel-1', properties: { activity_type: 'spin_wheel' } });
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'quiz_completed', source: 'activity', activityId: 'quiz-1', properties: { activity_type: 'quiz' } });
    progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.equal(progress.body.overall_progress, 0.75);
    assert.deepEqual(progress.body.milestones_reached, ['halfway']);
    assert.equal(progress.body.completed_at, null);

    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: '55' } } });
    progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.equal(progress.body.overall_progress, 1);
    assert.equal(progress.body.score, 100);
    assert.deepEqual(progress.body.milestones_reached, ['halfway', 'done']);
    assert.ok(progress.body.completed_at);

    // Facts after completion change nothing.
    await recordFact(db, tenant.tenantId, { participantId: 'p-1', name: 'purchase', properties: { order: { total: 500 } } });
    const after = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.deepEqual(after.body, progress.body);

    const events = await svc.sql(
      `SELECT event, data FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'p-1' AND event LIKE 'challenge.%' ORDER BY seq`,
      [tenant.tenantId],
    );
    assert.deepEqual(events.map((e) => e.event), ['challenge.enrolled.v1', 'challenge.milestone_reached.v1', 'challenge.milestone_reached.v1', 'challenge.completed.v1']);
    assert.equal(events[0].data.challenge_id, id);
    assert.ok(events[0].data.enrolled_at);
    assert.deepEqual([events[1].data.milestone, events[1].data.threshold], ['halfway', 0.5]);
    assert.deepEqual([events[2].data.milestone, events[2].data.threshold], ['done', 1]);
    assert.equal(events[3].data.score, 100);
    assert.equal(events[3].data.participant_id, 'p-1');
    assert.ok(events[3].data.completed_at);

    // The completion reward went through the points ledger.
    const awards = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'p-1' AND event = 'points.awarded.v1'`, [tenant.tenantId]);
    assert.equal(awards.length, 1);
    assert.equal(awards[0].data.amount, 50);
    assert.equal(awards[0].data.source_kind, 'challenge');

    const listedAfter = (await svc.request('GET', `/api/v1/public/challenges?${q}`)).body.challenges.find((c: { id: string }) => c.id === id);
    assert.equal(listedAfter.enrolled, true);
    assert.deepEqual(listedAfter.milestones.map((m: { reached: boolean }) => m.reached), [true, true]);

    const state = await db.tenant(tenant.tenantId, (tx) => readStatePart(challengesModule.stateParts!.challenges, tx, tenant.tenantId, 'p-1', null as never));
    assert.equal((state as Array<{ challenge_id: string; overall_progress: number }>).find((s) => s.challenge_id === id)?.overall_progress, 1);
  });

  await t.test('a fact delivered many times at once counts once; different facts at once all count', async () => {
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key: tenant.apiKey,
      body: challengeBody({ objectives: [{ id: 'visits', name: 'Visit 1000 times', evaluator: 'event_count', event_name: 'visit', target: 1000 }], milestones: [] }),
    });
    const id = created.body.id;
    const sessionId = await participantSession(svc, tenant, 'p-conc', engagementId);
    await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    const fact = { id: 'fct_same', participantId: 'p-conc', name: 'visit' };
    await Promise.all(Array.from({ length: 20 }, () => recordFact(db, tenant.tenantId, fact)));
    await Promise.all(Array.from({ length: 30 }, () => recordFact(db, tenant.tenantId, { participantId: 'p-conc', name: 'visit' })));
    const progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?session_id=${sessionId}&engagement_id=${engagementId}`);
    assert.equal(progress.body.objectives[0].current, 31);
  });

  await t.test('points_earned and badge_earned read the points and badges granted since enrollment', async () => {
    assert.equal((await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'vip', name: 'VIP' } })).status, 201);
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key: tenant.apiKey,
      body: challengeBody({
        objectives: [
          { id: 'points', name: 'Earn 100 points', evaluator: 'points_earned', target: 100 },
          { id: 'vip', name: 'Hold the VIP badge', evaluator: 'badge_earned', badge_code: 'vip', target: 1 },
        ],
        milestones: [],
      }),
    });
    const id = created.body.id;
    // Points before enrollment do not count; a badge already held does.
    const grant = (amount: number) => grantPoints(svc, tenant, 'p-state', amount);
    assert.equal((await grant(500)).status, 200);
    assert.equal((await svc.request('POST', '/api/v1/admin/badges/vip/award', { key: tenant.apiKey, body: { participant_id: 'p-state' } })).status, 200);
    const sessionId = await participantSession(svc, tenant, 'p-state', engagementId);
    const q = `session_id=${sessionId}&engagement_id=${engagementId}`;
    clock.advance(1000);
    await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    let progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.deepEqual(progress.body.objectives.map((o: { current: number }) => o.current), [0, 1]);

    clock.advance(1000);
    assert.equal((await grant(60)).status, 200);
    await recordFact(db, tenant.tenantId, { participantId: 'p-state', name: 'anything' });
    progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.deepEqual(progress.body.objectives.map((o: { current: number }) => o.current), [60, 1]);
    assert.equal(progress.body.overall_progress, 0.8);

    // A grant without any fact queues a re-evaluation job (run here by hand).
    assert.equal((await grant(40)).status, 200);
    const queued = await svc.sql(`SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'challenges.reevaluate'`);
    assert.ok(queued.some((j) => j.payload.participant_id === 'p-state'));
    // A participant whose open challenges only count facts gets no job: a grant cannot move them.
    const other = await grantPoints(svc, tenant, 'p-conc', 5);
    assert.equal(other.status, 200);
    const after = await svc.sql(`SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'challenges.reevaluate'`);
    assert.ok(!after.some((j) => j.payload.participant_id === 'p-conc'));
    // Retention may have deleted the outbox events of these grants and badges; progress does not depend on them.
    await svc.sql('DELETE FROM outbox_events WHERE tenant_id = $1', [tenant.tenantId]);
    await challengesModule.tasks!['challenges.reevaluate']({ tenant_id: tenant.tenantId, participant_id: 'p-state' }, { db, config: svc.config, log: svc.service.log });
    progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.equal(progress.body.overall_progress, 1);
    assert.ok(progress.body.completed_at);
  });

  await t.test('challenge leaderboard: ranks, ties, limits, and how the tenant is named', async () => {
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key: tenant.apiKey,
      body: challengeBody({ objectives: [{ id: 'steps', name: 'Four steps', evaluator: 'event_count', event_name: 'step', target: 4 }], milestones: [] }),
    });
    const id = created.body.id;
    const players = [
      ['lb-a', 3],
      ['lb-b', 1],
      ['lb-c', 3],
      ['lb-d', 0],
    ] as const;
    const sessions: Record<string, string> = {};
    for (const [participant, steps] of players) {
      sessions[participant] = await participantSession(svc, tenant, participant, engagementId, `Name ${participant}`);
      await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessions[participant], engagement_id: engagementId } });
      for (let i = 0; i < steps; i++) {
        clock.advance(10);
        await recordFact(db, tenant.tenantId, { participantId: participant, name: 'step' });
      }
    }
    const board = await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard?limit=3`, { headers: { 'x-service-tenant': tenant.slug } });
    assert.equal(board.status, 200, board.text);
    assert.equal(board.body.total_participants, 4);
    // lb-a reached 75 before lb-c did, so it ranks first.
    assert.deepEqual(
      board.body.entries.map((e: { rank: number; participant_id: string; score: number; display_name: string }) => [e.rank, e.participant_id, e.score, e.display_name]),
      [
        [1, 'lb-a', 75, 'Name lb-a'],
        [2, 'lb-c', 75, 'Name lb-c'],
        [3, 'lb-b', 25, 'Name lb-b'],
      ],
    );
    const mine = await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard?limit=1&session_id=${sessions['lb-d']}&engagement_id=${engagementId}`);
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.me.rank, 4);
    assert.equal(mine.body.entries.length, 1);
    const byKey = await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard`, { key: tenant.apiKey });
    assert.equal(byKey.body.entries.length, 4);

    for (const limit of ['0', '101', 'ten']) {
      const response = await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard?limit=${limit}`, { key: tenant.apiKey });
      assert.equal(response.status, 400, `limit=${limit}`);
    }
    // The documented request (limit only): the challenge id names its tenant.
    const anonymous = await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard?limit=2`);
    assert.equal(anonymous.status, 200, anonymous.text);
    assert.deepEqual(anonymous.body.entries.map((e: { participant_id: string }) => e.participant_id), ['lb-a', 'lb-c']);
    assert.equal(anonymous.body.total_participants, 4);
    assert.equal((await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard`, { headers: { 'x-service-tenant': 'no-such-tenant' } })).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/challenges/${id}/leaderboard`, { headers: { 'x-service-tenant': other.slug } })).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/challenges/${randomUUID()}/leaderboard`, { key: tenant.apiKey })).status, 404);
  });

  await t.test('unknown challenges and foreign sessions get 404', async () => {
    const sessionId = await participantSession(svc, tenant, 'p-404', engagementId);
    const q = `session_id=${sessionId}&engagement_id=${engagementId}`;
    assert.equal((await svc.request('GET', `/api/v1/public/challenges/${randomUUID()}/progress?${q}`)).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/public/challenges/${randomUUID()}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } })).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/challenges/not-a-uuid/progress?${q}`)).status, 400);
    const foreign = await svc.request('POST', '/api/v1/admin/challenges', { key: other.apiKey, body: challengeBody() });
    assert.equal((await svc.request('POST', `/api/v1/public/challenges/${foreign.body.id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } })).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/challenges?session_id=${sessionId}`)).status, 400);
  });
});
