import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestSession, type TestTenant } from '../../../test/helper.js';
import { completionBatchesSplit, completionBatchSize } from '../../platform/metrics.js';
import { ALWAYS_TEN_POINTS, complete, createEngagement, createReward, outbox, session, validate, wheel } from '../engagements/testing.js';
import { completeMany, type CompletionCall, type CompletionOutcome, type CompletionResponse } from './completion.js';
import { CompletionBatches } from './completion-batches.js';

/** So far in this process: completions committed, the transactions that committed them, and the batches split (metrics.ts). */
async function batches(): Promise<{ completions: number; transactions: number; split: number }> {
  const { values } = await completionBatchSize.get();
  const value = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  const split = (await completionBatchesSplit.get()).values[0]?.value ?? 0;
  return { completions: value('loyalty_completion_batch_size_sum'), transactions: value('loyalty_completion_batch_size_count'), split };
}

/** A coupon whose codes come from a pool of `codes`. */
async function couponPool(svc: TestService, tenant: TestTenant, id: string, codes: string[]): Promise<void> {
  await createReward(svc, tenant, { id, name: id, type: 'coupon', code_source: 'pool', metadata: { discount_percent: 50 } });
  const uploaded = await svc.request('POST', `/api/v1/admin/rewards/${id}/codes`, { key: tenant.apiKey, body: { codes } });
  assert.equal(uploaded.status, 200, uploaded.text);
}

async function sessions(svc: TestService, tenant: TestTenant, engagementId: string, count: number): Promise<TestSession[]> {
  const list: TestSession[] = [];
  for (let i = 0; i < count; i += 50) list.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => session(svc, tenant, engagementId)))));
  return list;
}

/** A session's spin of `activityId` as `completeMany` takes it, without an attempt of its own. */
function spinCall(tenant: TestTenant, s: TestSession, activityId = 'wheel1'): CompletionCall {
  return {
    session: { tenantId: tenant.tenantId, participantId: s.participantId, engagementId: s.engagementId },
    activityId,
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: 'spin_wheel' },
  };
}

test('a crowd on one wheel goes in batches: each spin answered once, its points and events written once, the coupons never oversold', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const codes = Array.from({ length: 10 }, (_, i) => `CROWD-${i}`);
  await couponPool(svc, tenant, 'crowd-coupon', codes);
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        max_attempts: 1,
        segments: [
          { label: '50% off', prize_type: 'reward', reward_id: 'crowd-coupon', weight: 3 },
          { label: '10 points', prize_type: 'points', prize_value: 10, weight: 3 },
          { label: 'Try again', prize_type: 'none', weight: 2 },
        ],
        on_completion: [{ type: 'award_points', amount: 1, reason: 'spun' }],
      }),
    ],
  });
  const crowd = await sessions(svc, tenant, engagement.id, 200);
  const before = await batches();
  const answers = await Promise.all(crowd.map((s) => complete(svc, s, 'wheel1', 'spin_wheel')));
  const after = await batches();

  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  assert.equal(after.completions - before.completions, 200);
  assert.equal(after.split, before.split, 'no batch was split: a coupon that ran out is drawn again in the batch');
  assert.ok(after.transactions - before.transactions < 100, `200 spins in ${after.transactions - before.transactions} transactions: the crowd went in batches`);

  // Each answer is whole: the prize, then the completion's point on top of it.
  const coupons: string[] = [];
  let pointPrizes = 0;
  for (const { body } of answers) {
    const [first, ...rest] = body.actions_executed;
    const completion = rest.length ? rest[0] : first;
    assert.deepEqual([completion.source, completion.points_awarded], ['on_completion', 1]);
    if (body.result.prize_type === 'points') {
      pointPrizes++;
      assert.deepEqual([first.source, first.points_awarded, first.new_balance, completion.new_balance], ['prize', 10, 10, 11]);
    } else if (body.result.prize_type === 'reward') {
      coupons.push(first.reward_claimed.code);
      assert.equal(completion.new_balance, 1);
    } else {
      assert.equal(completion.new_balance, 1);
    }
  }
  // Three in eight draws are the coupon until the 10 codes are gone: then the draw is repeated among the rest.
  assert.deepEqual(coupons.sort(), [...codes].sort(), 'the 10 codes, each handed out once');

  const [counted] = await svc.sql(
    `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS attempts,
            (SELECT count(DISTINCT participant_id)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS participants,
            (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims,
            (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1) AS entries,
            (SELECT coalesce(sum(available), 0)::int FROM points_balances WHERE tenant_id = $1) AS points,
            (SELECT count(*)::int FROM activity_participations WHERE tenant_id = $1 AND attempts_used = 1 AND completions = 1) AS participations`,
    [tenant.tenantId],
  );
  assert.deepEqual(counted, { attempts: 200, participants: 200, claims: 10, entries: 200 + pointPrizes, points: 200 + 10 * pointPrizes, participations: 200 });
  assert.equal((await outbox(svc, tenant.tenantId, 'activity.completed')).length, 200);
  assert.equal((await outbox(svc, tenant.tenantId, 'points.awarded.v1')).length, 200 + pointPrizes);
  assert.equal((await outbox(svc, tenant.tenantId, 'reward.claimed.v1')).length, 10);
});

test("a participant's second spin in a batch is refused with its figures, and the batch's other spins complete", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, {
    activities: [wheel({ max_attempts: 1, segments: ALWAYS_TEN_POINTS })],
  });
  const crowd = await sessions(svc, tenant, engagement.id, 60);
  // Each participant spins twice at once: 120 requests.
  const before = await batches();
  const answers = await Promise.all(crowd.flatMap((s) => [complete(svc, s, 'wheel1', 'spin_wheel'), complete(svc, s, 'wheel1', 'spin_wheel')]));
  const after = await batches();
  assert.ok(after.transactions - before.transactions < 60, `120 spins in ${after.transactions - before.transactions} transactions`);
  assert.equal(after.split, before.split, 'a refused take splits no batch');
  for (let i = 0; i < crowd.length; i++) {
    const pair = [answers[2 * i], answers[2 * i + 1]];
    const won = pair.filter((a) => a.status === 200);
    const refused = pair.filter((a) => a.status !== 200);
    assert.equal(won.length, 1, pair.map((a) => a.text).join('\n'));
    assert.equal(won[0].body.actions_executed[0].new_balance, 10);
    assert.equal(refused[0].status, 422, refused[0].text);
    assert.equal(refused[0].body.code, 'ATTEMPTS_EXHAUSTED');
    assert.deepEqual([refused[0].body.attempts_used, refused[0].body.max_attempts], [1, 1]);
  }
  const [counted] = await svc.sql(
    `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS attempts,
            (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1) AS entries`,
    [tenant.tenantId],
  );
  assert.deepEqual(counted, { attempts: 60, entries: 60 });
});

test("a participant of a batch without attempts left is refused with its figures, the others complete, and the batch is not split", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, { activities: [wheel({ max_attempts: 1, segments: ALWAYS_TEN_POINTS })] });
  const crowd = await sessions(svc, tenant, engagement.id, 3);
  assert.equal((await complete(svc, crowd[1], 'wheel1', 'spin_wheel')).status, 200);
  const calls = crowd.map((s) => spinCall(tenant, s));
  const before = await batches();
  const outcomes = await completeMany(svc.service.db, calls);
  const after = await batches();
  assert.deepEqual([after.transactions - before.transactions, after.split - before.split], [1, 0], 'one transaction, not split');
  assert.ok('response' in outcomes[0] && 'response' in outcomes[2], 'the others complete');
  const refused = (outcomes[1] as { error: { code?: string; extra?: Record<string, unknown> } }).error;
  assert.equal(refused.code, 'ATTEMPTS_EXHAUSTED');
  assert.deepEqual(refused.extra, { attempts_used: 1, max_attempts: 1 });
  const rows = await svc.sql<{ attempts_used: number; completions: number }>(
    'SELECT attempts_used, completions FROM activity_participations WHERE tenant_id = $1 ORDER BY participant_id',
    [tenant.tenantId],
  );
  assert.deepEqual(rows, crowd.map(() => ({ attempts_used: 1, completions: 1 })), 'no attempt taken twice');
});

test('a batch that fails after its takes is rolled back and its spins go one by one: a prize that ran out costs no attempt', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  await couponPool(svc, tenant, 'last-one', ['ONLY']);
  // The wheel's one prize is a single code: once it is claimed, every other spin finds the prizes exhausted after its take.
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        max_attempts: 1,
        segments: [
          { label: '90% off', prize_type: 'reward', reward_id: 'last-one', weight: 1 },
          { label: '90% off, again', prize_type: 'reward', reward_id: 'last-one', weight: 1 },
        ],
      }),
    ],
  });
  const crowd = await sessions(svc, tenant, engagement.id, 80);
  const before = await batches();
  const answers = await Promise.all(crowd.map((s) => complete(svc, s, 'wheel1', 'spin_wheel')));
  const after = await batches();
  assert.ok(after.split > before.split, 'batches were split');
  const won = answers.filter((a) => a.status === 200);
  assert.equal(won.length, 1, 'one code, one winner');
  assert.equal(won[0].body.actions_executed[0].reward_claimed.code, 'ONLY');
  for (const answer of answers.filter((a) => a.status !== 200)) {
    assert.equal(answer.status, 422, answer.text);
    assert.equal(answer.body.code, 'PRIZES_EXHAUSTED');
  }
  // Nothing of a refused spin stays: its attempt is not used, so it may spin again once the wheel has prizes.
  const [counted] = await svc.sql(
    `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1) AS attempts,
            (SELECT count(*)::int FROM activity_participations WHERE tenant_id = $1 AND attempts_used > 0) AS used,
            (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims`,
    [tenant.tenantId],
  );
  assert.deepEqual(counted, { attempts: 1, used: 1, claims: 1 });
});

test('two completions of one validated attempt in a batch: the attempt is completed once, the other asks for a new one', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, { activities: [wheel({ max_attempts: 1, segments: ALWAYS_TEN_POINTS })] });
  const s = await session(svc, tenant, engagement.id);
  const validated = await validate(svc, s, 'wheel1', 'spin_wheel');
  assert.equal(validated.status, 200, validated.text);
  const call = spinCall(tenant, s);
  const before = await batches();
  const [first, second] = await completeMany(svc.service.db, [call, call]);
  assert.equal((await batches()).split, before.split + 1, 'the batch went one by one');
  const outcomes = [first, second];
  const done = outcomes.filter((outcome) => 'response' in outcome);
  const refused = outcomes.filter((outcome) => 'error' in outcome);
  assert.equal(done.length, 1);
  assert.equal(done[0].response.attempt_id, validated.body.attempt_id, 'the validated attempt is the one completed');
  assert.equal((refused[0].error as { code?: string }).code, 'ATTEMPTS_EXHAUSTED');
  const [counted] = await svc.sql(`SELECT count(*)::int AS entries FROM points_ledger WHERE tenant_id = $1`, [tenant.tenantId]);
  assert.equal(counted.entries, 1, 'one prize');
});

test('a batch of validated and new attempts completes each once and clears the validated ones from their participations', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, { activities: [wheel({ max_attempts: 2, segments: ALWAYS_TEN_POINTS })] });
  const crowd = await sessions(svc, tenant, engagement.id, 4);
  const validated = await Promise.all(crowd.slice(0, 2).map((s) => validate(svc, s, 'wheel1', 'spin_wheel')));
  for (const answer of validated) assert.equal(answer.status, 200, answer.text);
  const calls = crowd.map((s) => spinCall(tenant, s));
  const before = await batches();
  const outcomes = await completeMany(svc.service.db, calls);
  for (const outcome of outcomes) assert.ok('response' in outcome, String((outcome as { error: unknown }).error));
  const after = await batches();
  assert.equal(after.split, before.split, 'the batch went as one');
  assert.equal(after.transactions - before.transactions, 1);
  assert.deepEqual(
    outcomes.slice(0, 2).map((outcome) => 'response' in outcome && outcome.response.attempt_id),
    validated.map((answer) => answer.body.attempt_id),
    'the validated attempts are the ones completed',
  );
  const rows = await svc.sql<{ participant_id: string; attempts_used: number; open_attempt_id: string | null; completions: number }>(
    'SELECT participant_id, attempts_used, open_attempt_id, completions FROM activity_participations WHERE tenant_id = $1 ORDER BY participant_id',
    [tenant.tenantId],
  );
  assert.deepEqual(
    rows,
    crowd.map((s) => ({ participant_id: s.participantId, attempts_used: 1, open_attempt_id: null, completions: 1 })).sort((a, b) => a.participant_id.localeCompare(b.participant_id)),
  );
  // Each may spin once more: no validated attempt is left waiting.
  for (const s of crowd) assert.equal((await complete(svc, s, 'wheel1', 'spin_wheel')).status, 200);
});

test("each completion of a batch gives its events its own request's trace context, not the one of the request that started the batch", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  await couponPool(svc, tenant, 'traced-coupon', Array.from({ length: 6 }, (_, i) => `TRACED-${i}`));
  const onCompletion = [{ type: 'award_points', amount: 1, reason: 'spun' }];
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      // Points only: every call's points go in one message.
      wheel({ id: 'points', max_attempts: 1, segments: ALWAYS_TEN_POINTS, on_completion: onCompletion }),
      // A coupon: each call's actions in turn, its claim's events among them.
      wheel({ id: 'coupon', max_attempts: 1, segments: [{ label: 'gone', prize_type: 'points', prize_value: 1, weight: 1, inventory: 0 }, { label: '50% off', prize_type: 'reward', reward_id: 'traced-coupon', weight: 1 }], on_completion: onCompletion }),
    ],
  });
  const crowd = await sessions(svc, tenant, engagement.id, 6);
  const traceOf = (i: number) => `00-${String(i + 1).padStart(32, '0')}-${String(i + 1).padStart(16, '0')}-01`;
  for (const activityId of ['points', 'coupon']) {
    const calls = crowd.map((s, i) => ({ ...spinCall(tenant, s, activityId), traceparent: traceOf(i) }));
    const outcomes = await completeMany(svc.service.db, calls);
    for (const outcome of outcomes) assert.ok('response' in outcome, String((outcome as { error: unknown }).error));
  }
  const rows = await svc.sql<{ participant_id: string; event: string; traceparent: string | null }>(
    'SELECT participant_id, event, traceparent FROM outbox_events WHERE tenant_id = $1 AND participant_id = ANY ($2::text[]) ORDER BY seq',
    [tenant.tenantId, crowd.map((s) => s.participantId)],
  );
  for (const [i, s] of crowd.entries()) {
    const own = rows.filter((row) => row.participant_id === s.participantId && row.event !== 'participant.created');
    const events = own.map((row) => row.event);
    for (const event of ['points.awarded.v1', 'activity.completed', 'reward.claimed.v1']) assert.ok(events.includes(event), `${s.participantId}: ${event} among ${events.join(', ')}`);
    assert.deepEqual([...new Set(own.map((row) => row.traceparent))], [traceOf(i)], `${s.participantId}'s events: ${events.join(', ')}`);
  }
});

test("an activity has one batch in the database at a time, and its crowd waits for it as the next batch; another activity's completions are not held behind it", async () => {
  // The scheduler alone, with a stand-in for the database's batch: each batch is held until the test ends it.
  const held: { activity: string; calls: CompletionCall[]; end(): void }[] = [];
  const runBatch = (_db: unknown, calls: CompletionCall[]) =>
    new Promise<CompletionOutcome[]>((resolve) => {
      held.push({ activity: calls[0].activityId, calls, end: () => resolve(calls.map(() => ({ response: { success: true } as CompletionResponse }))) });
    });
  const scheduler = new CompletionBatches({} as never, 2, runBatch);
  let participants = 0;
  const call = (activityId: string, attemptId?: string): CompletionCall => ({
    session: { tenantId: 't', participantId: `p-${++participants}`, engagementId: 'e' },
    activityId,
    body: { session_id: 's', engagement_id: 'e', activity_type: 'spin_wheel', ...(attemptId ? { attempt_id: attemptId } : {}) },
  });
  const settled = (answers: Promise<unknown>[]) => Promise.all(answers).then(() => undefined);
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  // A lone spin goes at once, a batch of one.
  const first = scheduler.submit(call('wheel'));
  assert.deepEqual(held.map((batch) => [batch.activity, batch.calls.length]), [['wheel', 1]]);

  // The wheel's crowd waits for it, though a second batch could go: it goes as the next batch.
  const crowd = Array.from({ length: 60 }, () => scheduler.submit(call('wheel')));
  assert.equal(held.length, 1);
  // Another activity takes the free place at once; a third waits for a place.
  const quiz = scheduler.submit(call('quiz'));
  const poll = scheduler.submit(call('poll'));
  assert.deepEqual(held.map((batch) => [batch.activity, batch.calls.length]), [['wheel', 1], ['quiz', 1]]);
  // A completion of a validated attempt never waits and is not counted.
  const validated = scheduler.submit(call('wheel', 'attempt-1'));
  assert.deepEqual(held.map((batch) => [batch.activity, batch.calls.length]), [['wheel', 1], ['quiz', 1], ['wheel', 1]]);
  held[2].end();
  await validated;

  // The wheel's batch ends: the waiting activities take turns, the longest waiting first: the wheel's 50, not the poll.
  held[0].end();
  await first;
  await turn();
  assert.deepEqual(held.slice(3).map((batch) => [batch.activity, batch.calls.length]), [['wheel', 50]]);
  held[1].end();
  await quiz;
  await turn();
  assert.deepEqual(held.slice(3).map((batch) => [batch.activity, batch.calls.length]), [['wheel', 50], ['poll', 1]]);
  held[3].end();
  await turn();
  assert.deepEqual(held.slice(3).map((batch) => [batch.activity, batch.calls.length]), [['wheel', 50], ['poll', 1], ['wheel', 10]]);
  held[4].end();
  held[5].end();
  await settled([poll, ...crowd]);
  assert.equal(held.length, 6, 'every call answered, in six batches');
});
