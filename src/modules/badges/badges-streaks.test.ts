import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { sendSync } from '../ingestion/testing.js';
import { sweepLapsedStreaks } from '../streaks/index.js';
import { runOccurrence, startDueOccurrences } from '../rules/index.js';
import { awardBadgeInTx, hasBadgeInTx } from './index.js';
import { readStatePart } from '../../platform/module.js';

test('badges and streaks', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const db = svc.service.db;
  const post = (path: string, body: unknown, apiKey = tenant.apiKey) => svc.request('POST', `/api/v1${path}`, { key: apiKey, body });
  t.after(() => clock.reset());

  await t.test('badge definitions: create, read, list, change, conflicts and bad input', async () => {
    const created = await post('/admin/badges', { code: 'explorer', name: 'Explorer', description: 'Visited five pages', image_url: 'https://cdn.example/explorer.png' });
    assert.equal(created.status, 201);
    assert.equal(created.body.code, 'explorer');
    assert.equal((await post('/admin/badges', { code: 'explorer', name: 'Again' })).status, 409);
    assert.equal((await post('/admin/badges', { code: 'bad code!', name: 'x' })).status, 400);
    assert.equal((await post('/admin/badges', { code: 'x', name: 'x', image_url: 'javascript:alert(1)' })).status, 400);
    await post('/admin/badges', { code: 'achiever', name: 'Achiever' });
    const list = await svc.request('GET', '/api/v1/admin/badges?limit=1', { key: tenant.apiKey });
    assert.deepEqual(list.body.badges.map((b: { code: string }) => b.code), ['achiever']);
    const page2 = await svc.request('GET', `/api/v1/admin/badges?limit=1&cursor=${list.body.next_cursor}`, { key: tenant.apiKey });
    assert.deepEqual(page2.body.badges.map((b: { code: string }) => b.code), ['explorer']);
    const patched = await svc.request('PATCH', '/api/v1/admin/badges/explorer', { key: tenant.apiKey, body: { description: null } });
    assert.equal(patched.body.description, null);
    assert.equal((await svc.request('GET', '/api/v1/admin/badges/explorer', { key: other.apiKey })).status, 404);
  });

  await t.test('awardBadgeInTx is idempotent and emits badge.earned.v1 once; hasBadgeInTx sees it', async () => {
    const first = await db.tenant(tenant.tenantId, (tx) => awardBadgeInTx(tx, tenant.tenantId, { participantId: 'hero', badgeCode: 'explorer', source: { kind: 'activity', id: 'act-1' } }));
    const second = await db.tenant(tenant.tenantId, (tx) => awardBadgeInTx(tx, tenant.tenantId, { participantId: 'hero', badgeCode: 'explorer', source: { kind: 'challenge', id: 'ch-1' } }));
    assert.equal(first.awarded, true);
    assert.equal(second.awarded, false);
    assert.equal(second.earnedAt.getTime(), first.earnedAt.getTime());
    assert.equal(await db.tenant(tenant.tenantId, (tx) => hasBadgeInTx(tx, tenant.tenantId, 'hero', 'explorer')), true);
    assert.equal(await db.tenant(other.tenantId, (tx) => hasBadgeInTx(tx, other.tenantId, 'hero', 'explorer')), false);
    const events = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'badge.earned.v1' AND participant_id = 'hero'`, [tenant.tenantId]);
    assert.equal(events.length, 1);
    assert.deepEqual(Object.keys(events[0].data).filter((k) => ['participant_id', 'badge_code', 'badge_name', 'earned_at'].includes(k)).sort(), ['badge_code', 'badge_name', 'earned_at', 'participant_id']);
    const direct = await post('/admin/badges/achiever/award', { participant_id: 'hero' });
    assert.equal(direct.status, 200);
    assert.equal(direct.body.awarded, true);
    assert.equal((await post('/admin/badges/achiever/award', { participant_id: 'hero' })).body.awarded, false);
    assert.equal((await post('/admin/badges/nope/award', { participant_id: 'hero' })).status, 404);
  });

  await t.test('the session participant reads every badge with earned and earned_at, or only those filtered', async () => {
    const engagementId = randomUUID();
    // Sessions are issued for engagements that exist, in each tenant.
    await svc.createEngagement(tenant, engagementId);
    await svc.createEngagement(other, engagementId);
    const session = await post('/sessions', { participant_id: 'hero', engagement_id: engagementId });
    assert.equal(session.status, 201, session.text);
    const sid = session.body.session_id;
    const all = await svc.request('GET', `/api/v1/public/badges/status?session_id=${sid}&engagement_id=${engagementId}`);
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.badges.map((b: { code: string; earned: boolean }) => [b.code, b.earned]), [['achiever', true], ['explorer', true]]);
    assert.ok(all.body.badges.every((b: { earned_at: string }) => !Number.isNaN(Date.parse(b.earned_at))));
    await post('/admin/badges', { code: 'legend', name: 'Legend' });
    const filtered = await svc.request('GET', `/api/v1/public/badges/status?session_id=${sid}&badge_codes=legend,explorer,unknown`);
    assert.deepEqual(filtered.body.badges.map((b: { code: string; earned: boolean; earned_at: string | null }) => [b.code, b.earned, b.earned_at === null]), [['explorer', true, false], ['legend', false, true]]);
    assert.equal((await svc.request('GET', '/api/v1/public/badges/status')).status, 401);
    assert.equal((await svc.request('GET', `/api/v1/public/badges/status?session_id=${sid}`, { key: tenant.apiKey })).status, 403);
    assert.equal((await svc.request('GET', `/api/v1/public/badges/status?session_id=${sid}&badge_codes=${Array.from({ length: 101 }, (_, i) => `c${i}`).join(',')}`)).status, 400);
    // Another tenant's participant with the same id sees that tenant's badges only.
    const theirSession = await post('/sessions', { participant_id: 'hero', engagement_id: engagementId }, other.apiKey);
    const theirs = await svc.request('GET', `/api/v1/public/badges/status?session_id=${theirSession.body.session_id}`);
    assert.deepEqual(theirs.body.badges, []);
  });

  await t.test('a daily streak continues, breaks after a missed day, restarts at 1 and keeps the longest', async () => {
    await post('/admin/streaks', { code: 'daily', name: 'Daily', period: 'daily', event_name: 'open_app' });
    const day = (iso: string) => sendSync(svc, tenant, { event_name: 'open_app', participant_id: 'streaker', timestamp: iso });
    for (const iso of ['2026-07-01T08:00:00Z', '2026-07-01T20:00:00Z', '2026-07-02T08:00:00Z', '2026-07-03T08:00:00Z']) await day(iso);
    const read = async () => (await svc.sql(`SELECT current_length, longest_length FROM participant_streaks WHERE tenant_id = $1 AND participant_id = 'streaker'`, [tenant.tenantId]))[0];
    assert.deepEqual(await read(), { current_length: 3, longest_length: 3 });
    await day('2026-07-05T08:00:00Z');
    assert.deepEqual(await read(), { current_length: 1, longest_length: 3 });
    const events = await svc.sql(`SELECT event, data FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'streaker' ORDER BY seq`, [tenant.tenantId]);
    assert.deepEqual(events.map((e) => [e.event, e.data.current_length ?? e.data.previous_length]), [
      ['streak.continued.v1', 1],
      ['streak.continued.v1', 2],
      ['streak.continued.v1', 3],
      ['streak.broken.v1', 3],
      ['streak.continued.v1', 1],
    ]);
    assert.equal(events[2].data.longest_length, 3);
    assert.equal(events[2].data.streak_code, 'daily');
  });

  await t.test('a grace period forgives one missed day; a weekly streak counts ISO weeks in the tenant time zone', async () => {
    await post('/admin/streaks', { code: 'lenient', name: 'Lenient', period: 'daily', event_name: 'workout', grace_periods: 1 });
    for (const iso of ['2026-07-01T08:00:00Z', '2026-07-03T08:00:00Z', '2026-07-06T08:00:00Z']) await sendSync(svc, tenant, { event_name: 'workout', participant_id: 'athlete', timestamp: iso });
    const [lenient] = await svc.sql(`SELECT current_length, longest_length FROM participant_streaks WHERE tenant_id = $1 AND participant_id = 'athlete'`, [tenant.tenantId]);
    assert.deepEqual(lenient, { current_length: 1, longest_length: 2 });

    await svc.sql(`UPDATE tenants SET timezone = 'Asia/Tokyo' WHERE id = $1`, [tenant.tenantId]);
    await post('/admin/streaks', { code: 'weekly', name: 'Weekly', period: 'weekly', event_name: 'shop' });
    // Sunday 2026-07-05 16:00Z is Monday 6 July in Tokyo: the second week.
    for (const iso of ['2026-06-29T01:00:00Z', '2026-07-05T16:00:00Z', '2026-07-13T01:00:00Z']) await sendSync(svc, tenant, { event_name: 'shop', participant_id: 'shopper', timestamp: iso });
    const [weekly] = await svc.sql(`SELECT current_length, last_period_start::text AS start FROM participant_streaks WHERE tenant_id = $1 AND participant_id = 'shopper'`, [tenant.tenantId]);
    assert.deepEqual(weekly, { current_length: 3, start: '2026-07-13' });
    await svc.sql(`UPDATE tenants SET timezone = 'UTC' WHERE id = $1`, [tenant.tenantId]);
  });

  await t.test('an earn rule continues a streak; the sweep breaks lapsed streaks and the state part shows 0', async () => {
    await post('/admin/streaks', { code: 'ruled', name: 'Ruled', period: 'daily' });
    await post('/admin/rules', { name: 'streak rule', event_name: 'lesson', conditions: { all: [{ fact: 'properties.completed', operator: 'equals', value: true }] }, effects: [{ type: 'continue_streak', streak_code: 'ruled' }] });
    clock.freeze(new Date('2026-08-02T12:00:00Z'));
    await sendSync(svc, tenant, { event_name: 'lesson', participant_id: 'learner', timestamp: '2026-08-01T10:00:00Z', properties: { completed: true } });
    await sendSync(svc, tenant, { event_name: 'lesson', participant_id: 'learner', timestamp: '2026-08-02T10:00:00Z', properties: { completed: true } });
    await sendSync(svc, tenant, { event_name: 'lesson', participant_id: 'learner', timestamp: '2026-08-02T11:00:00Z', properties: { completed: false } });
    const { default: streaks } = await import('../streaks/index.js');
    const part = () => db.tenant(tenant.tenantId, (tx) => readStatePart(streaks.stateParts!.streaks, tx, tenant.tenantId, 'learner', null as never)) as Promise<Array<{ streak_code: string; current_length: number; longest_length: number }>>;
    assert.deepEqual((await part()).map((s) => [s.streak_code, s.current_length, s.longest_length]), [['ruled', 2, 2]]);
    // The July streaks of the tests above have lapsed by now; the learner's has not.
    await sweepLapsedStreaks(db);
    assert.equal((await svc.sql(`SELECT 1 FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'learner' AND event = 'streak.broken.v1'`, [tenant.tenantId])).length, 0);
    clock.freeze(new Date('2026-08-04T00:30:00Z'));
    assert.deepEqual((await part()).map((s) => s.current_length), [0]);
    assert.equal(await sweepLapsedStreaks(db), 1);
    const broken = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'learner' AND event = 'streak.broken.v1'`, [tenant.tenantId]);
    assert.deepEqual(broken.map((b) => b.data.previous_length), [2]);
    assert.equal(await sweepLapsedStreaks(db), 0);
    clock.reset();
  });

  await t.test('the badges state part lists the badges earned', async () => {
    const { default: badges } = await import('./index.js');
    const part = (await db.tenant(tenant.tenantId, (tx) => readStatePart(badges.stateParts!.badges, tx, tenant.tenantId, 'hero', null as never))) as Array<{ code: string; earned: boolean }>;
    assert.deepEqual(part.map((b) => [b.code, b.earned]).sort(), [['achiever', true], ['explorer', true]]);
  });

  await t.test('a recurring rule runs once per occurrence for every participant, even when re-run', async () => {
    await post('/admin/badges', { code: 'loyal', name: 'Loyal' });
    const rule = await post('/admin/rules', { name: 'monthly loyalty', trigger: 'recurring', schedule: 'monthly', conditions: { all: [{ fact: 'participant.badges', operator: 'contains', value: 'explorer' }] }, effects: [{ type: 'award_points', points: 25 }, { type: 'award_badge', badge_code: 'loyal' }] });
    assert.equal(rule.status, 201, rule.text);
    assert.equal((await post('/admin/rules', { name: 'bad', trigger: 'recurring', schedule: 'monthly', conditions: { all: [{ fact: 'properties.x', operator: 'exists' }] }, effects: [{ type: 'award_points', points: 1 }] })).status, 400);
    clock.freeze(new Date('2026-09-01T00:20:00Z'));
    assert.equal(await startDueOccurrences(db), 1);
    assert.equal(await startDueOccurrences(db), 0);
    const [occurrence] = await svc.sql('SELECT occurrence::text AS occurrence FROM earn_rule_occurrences WHERE tenant_id = $1 AND rule_id = $2', [tenant.tenantId, rule.body.id]);
    assert.equal(occurrence.occurrence, '2026-09-01');
    const log = svc.service.log;
    assert.equal(await runOccurrence(db, log, tenant.tenantId, rule.body.id, occurrence.occurrence), 1);
    assert.equal(await runOccurrence(db, log, tenant.tenantId, rule.body.id, occurrence.occurrence), 0);
    const ledger = await svc.sql(`SELECT participant_id, delta FROM points_ledger WHERE tenant_id = $1 AND memo LIKE 'recurring%'`, [tenant.tenantId]);
    assert.deepEqual(ledger.map((l) => [l.participant_id, l.delta]), [['hero', 25]]);
    clock.reset();
  });

});
