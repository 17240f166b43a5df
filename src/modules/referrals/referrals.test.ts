import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService } from '../../../test/helper.js';
import referralsModule from './index.js';
import { readStatePart } from '../../platform/module.js';

test('referrals', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const campaign = randomUUID();

  const generate = (body: Record<string, unknown>, key = tenant.apiKey) => svc.request('POST', '/api/v1/referrals/generate', { key, body });
  const convert = (body: Record<string, unknown>) => svc.request('POST', '/api/v1/referrals/convert', { body });

  await t.test('generate returns the same code for the same participant and campaign, even when racing', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => generate({ participant_id: 'alice', campaign_id: campaign })));
    for (const r of results) assert.equal(r.status, 200, r.text);
    const codes = new Set(results.map((r) => r.body.code));
    assert.equal(codes.size, 1);
    assert.equal(results.filter((r) => r.body.created).length, 1);
    const [code] = codes;
    assert.match(code, /^[A-Z2-9]{10}$/);
    assert.equal(results[0].body.participant_id, 'alice');
    assert.equal(results[0].body.campaign_id, campaign);
    assert.equal(results[0].body.referral_url, `${svc.baseUrl}/api/v1/referrals/validate/${code}`, 'absolute without PUBLIC_BASE_URL: the origin the request came to');
    const otherCampaign = await generate({ participant_id: 'alice', campaign_id: randomUUID() });
    assert.notEqual(otherCampaign.body.code, code);
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM referral_codes WHERE tenant_id = $1', [tenant.tenantId]))[0].n, 2);
  });

  await t.test('generate needs a key and a well-formed body', async () => {
    assert.equal((await svc.request('POST', '/api/v1/referrals/generate', { body: { participant_id: 'x', campaign_id: campaign } })).status, 401);
    assert.equal((await generate({ participant_id: 'x', campaign_id: 'not-a-uuid' })).status, 400);
    assert.equal((await generate({ participant_id: 'x', campaign_id: campaign, tenant_id: other.tenantId })).status, 400);
    assert.equal((await generate({ participant_id: 'x', campaign_id: campaign, ip_address: '999.1.1.1' })).status, 400);
  });

  await t.test('validate: valid, unknown, malformed', async () => {
    const code = (await generate({ participant_id: 'bob', campaign_id: campaign })).body.code;
    const ok = await svc.request('GET', `/api/v1/referrals/validate/${code.toLowerCase()}`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { valid: true, code, referrer_id: 'bob', campaign_id: campaign });
    const unknown = await svc.request('GET', '/api/v1/referrals/validate/ZZZZZZZZZZ');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.valid, false);
    assert.equal(unknown.body.code, 'REFERRAL_CODE_NOT_FOUND');
    assert.match(unknown.body.detail, /does not exist/);
    const malformed = await svc.request('GET', '/api/v1/referrals/validate/abc!');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.valid, false);
    assert.equal(malformed.body.code, 'REFERRAL_CODE_MALFORMED');
  });

  await t.test('convert: one conversion per session, self-referral and repeats refused, event and stats', async () => {
    const code = (await generate({ participant_id: 'carol', campaign_id: campaign, email: 'Carol@Example.com' })).body.code;
    const self = await convert({ code, referred_session_id: 's-self', referred_participant_id: 'carol' });
    assert.equal(self.status, 422);
    assert.equal(self.body.code, 'SELF_REFERRAL');
    const sameEmail = await convert({ code, referred_session_id: 's-email', email: 'carol@example.com' });
    assert.equal(sameEmail.status, 422);
    assert.equal(sameEmail.body.code, 'SELF_REFERRAL');

    const first = await convert({ code, referred_session_id: 's-1', referred_participant_id: 'dave', email: 'dave@example.com' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.converted, true);
    assert.equal(first.body.status, 'converted');
    assert.equal(first.body.referrer_id, 'carol');

    for (const [body, label] of [
      [{ code, referred_session_id: 's-1' }, 'same session'],
      [{ code, referred_session_id: 's-2', referred_participant_id: 'dave' }, 'same participant'],
      [{ code, referred_session_id: 's-3', email: 'DAVE@example.com' }, 'same email'],
    ] as const) {
      const repeat = await convert(body);
      assert.equal(repeat.status, 409, label);
      assert.equal(repeat.body.code, 'REFERRAL_ALREADY_CONVERTED');
    }
    const racing = await Promise.all(Array.from({ length: 8 }, () => convert({ code, referred_session_id: 's-race' })));
    assert.equal(racing.filter((r) => r.status === 200).length, 1);
    assert.equal(racing.filter((r) => r.status === 409).length, 7);

    assert.equal((await convert({ code: 'ZZZZZZZZZZ', referred_session_id: 's-x' })).status, 404);
    assert.equal((await convert({ code: '12', referred_session_id: 's-x' })).status, 400);
    assert.equal((await convert({ code, referred_session_id: 's-x', extra: true })).status, 400);

    const events = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'referral.converted.v1' ORDER BY seq`, [tenant.tenantId]);
    assert.equal(events.length, 2);
    assert.deepEqual(
      { ...events[0].data, campaign_id: undefined },
      { participant_id: 'carol', referrer_id: 'carol', conversion_id: first.body.conversion_id, code, referred_session_id: 's-1', campaign_id: undefined },
    );

    const stats = await svc.request('GET', '/api/v1/referrals/stats/carol', { key: tenant.apiKey });
    assert.equal(stats.status, 200, stats.text);
    assert.equal(stats.body.total_referrals, 2);
    assert.equal(stats.body.conversions, 2);
    assert.equal(stats.body.pending, 0);
    assert.equal(stats.body.referral_code, code);
    assert.equal((await svc.request('GET', '/api/v1/referrals/stats/carol', { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('GET', '/api/v1/referrals/stats/nobody', { key: tenant.apiKey })).status, 404);
    const state = await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(referralsModule.stateParts!.referrals, tx, tenant.tenantId, 'carol', null as never));
    assert.equal((state as { conversions: number }).conversions, 2);
  });

  await t.test('a session of the tenant names the referred participant', async () => {
    const code = (await generate({ participant_id: 'erin', campaign_id: campaign })).body.code;
    const session = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'erin', engagement_id: await svc.createEngagement(tenant) } });
    const self = await convert({ code, referred_session_id: session.body.session_id });
    assert.equal(self.status, 422);
    assert.equal(self.body.code, 'SELF_REFERRAL');
  });

  await t.test('fraud signals hold conversions for review; an admin approves or rejects', async () => {
    const set = await svc.request('PUT', '/api/v1/admin/referrals/settings', {
      key: tenant.apiKey,
      body: { velocity_per_hour: 2, milestones: [{ conversions: 2, points: 100 }] },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.velocity_per_day, 20);
    assert.equal((await svc.request('PUT', '/api/v1/admin/referrals/settings', { key: tenant.apiKey, body: { milestones: [{ conversions: 3 }] } })).status, 400);

    const code = (await generate({ participant_id: 'frank', campaign_id: campaign, device_id: 'dev-frank', ip_address: '203.0.113.7' })).body.code;
    const sameDevice = await convert({ code, referred_session_id: 'f-1', device_id: 'dev-frank' });
    assert.equal(sameDevice.status, 200);
    assert.equal(sameDevice.body.converted, false);
    assert.equal(sameDevice.body.status, 'pending_review');
    const sameIp = await convert({ code, referred_session_id: 'f-2', ip_address: '203.0.113.7' });
    assert.equal(sameIp.body.status, 'pending_review');
    // Held conversions count toward velocity: the third within the hour is held too.
    const fast = await convert({ code, referred_session_id: 'f-3' });
    assert.equal(fast.body.status, 'pending_review');

    const queue = await svc.request('GET', '/api/v1/admin/referrals/conversions?status=pending_review', { key: tenant.apiKey });
    assert.equal(queue.status, 200, queue.text);
    const byId = new Map(queue.body.conversions.map((c: { conversion_id: string }) => [c.conversion_id, c]));
    assert.deepEqual((byId.get(sameDevice.body.conversion_id) as { signals: Array<{ signal: string }> }).signals.map((s) => s.signal), ['same_device']);
    assert.deepEqual((byId.get(sameIp.body.conversion_id) as { signals: Array<{ signal: string }> }).signals.map((s) => s.signal), ['same_ip']);
    assert.deepEqual((byId.get(fast.body.conversion_id) as { signals: Array<{ signal: string; observed: number; threshold: number }> }).signals, [
      { signal: 'velocity_per_hour', observed: 3, threshold: 2 },
    ]);
    assert.equal((await svc.sql(`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND event = 'referral.converted.v1' AND participant_id = 'frank'`, [tenant.tenantId]))[0].n, 0);

    assert.equal((await svc.request('POST', `/api/v1/admin/referrals/conversions/${sameDevice.body.conversion_id}/approve`, { key: other.apiKey, body: {} })).status, 404);
    const approved = await svc.request('POST', `/api/v1/admin/referrals/conversions/${sameDevice.body.conversion_id}/approve`, { key: tenant.apiKey, body: { note: 'shared household' } });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'converted');
    assert.equal(approved.body.decision_note, 'shared household');
    const rejected = await svc.request('POST', `/api/v1/admin/referrals/conversions/${sameIp.body.conversion_id}/reject`, { key: tenant.apiKey, body: {} });
    assert.equal(rejected.body.status, 'rejected');
    assert.equal((await svc.request('POST', `/api/v1/admin/referrals/conversions/${sameIp.body.conversion_id}/approve`, { key: tenant.apiKey, body: {} })).status, 422);
    // The second counted conversion reaches the milestone of 2: 100 points, once.
    const secondApproval = await svc.request('POST', `/api/v1/admin/referrals/conversions/${fast.body.conversion_id}/approve`, { key: tenant.apiKey, body: {} });
    assert.equal(secondApproval.status, 200);
    const awards = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND participant_id = 'frank'`, [tenant.tenantId]);
    assert.equal(awards.length, 1);
    assert.equal(awards[0].data.amount, 100);
    assert.equal(awards[0].data.source_kind, 'referral');
    const stats = await svc.request('GET', '/api/v1/referrals/stats/frank', { key: tenant.apiKey });
    assert.deepEqual([stats.body.total_referrals, stats.body.conversions, stats.body.pending, stats.body.rejected], [3, 2, 0, 1]);
  });
});
