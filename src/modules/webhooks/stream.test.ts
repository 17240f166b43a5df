import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor, type TestService } from '../../../test/helper.js';
import { emit } from '../../platform/outbox.js';
import { startReceiver } from './testing.js';

/**
 * The participant's live stream: the same envelopes, with the same ids, as
 * the webhook deliveries; only the session's participant and engagement;
 * resumable with Last-Event-ID.
 */
const ENGAGEMENT = '33333333-3333-4333-8333-333333333333';
const OTHER_ENGAGEMENT = '44444444-4444-4444-8444-444444444444';

interface OpenStream {
  messages: Array<{ id: string; envelope: any }>;
  status: number;
  close(): void;
}

async function openStream(svc: TestService, query: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${svc.baseUrl}/api/v1/public/events/stream?${query}`, { headers, signal: controller.signal });
  const stream: OpenStream = { messages: [], status: response.status, close: () => controller.abort() };
  if (response.status !== 200 || !response.body) return stream;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id && data) stream.messages.push({ id, envelope: JSON.parse(data) });
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return stream;
}

test('live stream: same envelopes and ids as webhooks, scoped to the session, resumable', async (t) => {
  const svc = await startTestService(t, { jobs: true, config: { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const tenant = await svc.createTenant();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const created = await svc.request('POST', '/api/v1/gamify/webhooks', { key: tenant.apiKey, body: { name: 'r', url: `${receiver.url}/h`, events: ['badge.earned.v1'] } });
  assert.equal(created.status, 201, created.text);
  await svc.createEngagement(tenant, ENGAGEMENT);
  const session = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'fan-1', engagement_id: ENGAGEMENT } });
  assert.equal(session.status, 201, session.text);
  const query = `session_id=${session.body.session_id}&engagement_id=${ENGAGEMENT}`;
  const badge = (participantId: string, code: string, engagementId: string | null = ENGAGEMENT) => ({
    event: 'badge.earned.v1',
    participantId,
    engagementId,
    data: { participant_id: participantId, badge_code: code, badge_name: code, earned_at: new Date().toISOString() },
  });
  const emitNow = (events: ReturnType<typeof badge>[]) => svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, events));

  await t.test('credentials: no session is 401, an API key is 403, another engagement is 403', async () => {
    assert.equal((await openStream(svc, `engagement_id=${ENGAGEMENT}`)).status, 401);
    assert.equal((await openStream(svc, `session_id=ses_${'x'.repeat(32)}&engagement_id=${ENGAGEMENT}`)).status, 401);
    assert.equal((await openStream(svc, query, { 'x-api-key': tenant.apiKey })).status, 403);
    assert.equal((await openStream(svc, `session_id=${session.body.session_id}&engagement_id=${OTHER_ENGAGEMENT}`)).status, 403);
  });

  await t.test('a committed event appears on the stream with the id and envelope the webhook receiver got', async () => {
    const stream = await openStream(svc, query);
    assert.equal(stream.status, 200);
    t.after(() => stream.close());
    const [mine, otherEngagement, noEngagement, otherParticipant] = await emitNow([
      badge('fan-1', 'one'),
      badge('fan-1', 'elsewhere', OTHER_ENGAGEMENT),
      badge('fan-1', 'global', null),
      badge('fan-2', 'not-mine'),
    ]);
    await waitFor('stream messages', () => stream.messages.length >= 2);
    const webhook = await waitFor('the webhook', () => receiver.received.find((r) => r.body?.id === mine));
    const streamed = stream.messages.find((m) => m.id === mine)!;
    assert.deepEqual(streamed.envelope, webhook.body, 'the same envelope');
    assert.ok(stream.messages.some((m) => m.id === noEngagement), 'events without an engagement are shown');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(!stream.messages.some((m) => m.id === otherEngagement || m.id === otherParticipant));
    stream.close();
  });

  await t.test('reconnecting with Last-Event-ID delivers what was missed, once', async () => {
    const first = await openStream(svc, query);
    const [a] = await emitNow([badge('fan-1', 'a')]);
    await waitFor('a', () => first.messages.some((m) => m.id === a));
    first.close();
    const missed = await emitNow([badge('fan-1', 'b'), badge('fan-1', 'c')]);
    const resumed = await openStream(svc, query, { 'last-event-id': a });
    t.after(() => resumed.close());
    await waitFor('the missed events', () => missed.every((id) => resumed.messages.some((m) => m.id === id)));
    assert.ok(!resumed.messages.some((m) => m.id === a), 'the last seen event is not repeated');
    const [d] = await emitNow([badge('fan-1', 'd')]);
    await waitFor('a live event after resuming', () => resumed.messages.some((m) => m.id === d));
    assert.equal(new Set(resumed.messages.map((m) => m.id)).size, resumed.messages.length, 'no duplicates');
    resumed.close();
  });

  await t.test('a resume from an id the stream no longer knows starts from now, announced by a reset message', async () => {
    const [old] = await emitNow([badge('fan-1', 'old')]);
    // Retention deleted it (or it was never this participant's: the two are not told apart).
    await svc.sql('DELETE FROM outbox_events WHERE id = $1', [old]);
    for (const lastEventId of [old, 'evt_unknown']) {
      const controller = new AbortController();
      const response = await fetch(`${svc.baseUrl}/api/v1/public/events/stream?${query}`, { headers: { 'last-event-id': lastEventId }, signal: controller.signal });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('event: reset')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      controller.abort();
      assert.match(text, /^retry: 3000\n\nevent: reset\ndata: \{"reason":"last_event_id_unknown"\}\n\n/);
    }
    const resumed = await openStream(svc, query, { 'last-event-id': 'evt_unknown' });
    t.after(() => resumed.close());
    const [next] = await emitNow([badge('fan-1', 'next')]);
    await waitFor('a live event after the reset', () => resumed.messages.some((m) => m.id === next));
    assert.equal(resumed.messages.length, 1, 'nothing from before the reset is replayed');
  });
});

test('live stream: an event whose notification never comes arrives with the next heartbeat, on a fresh stream too', async (t) => {
  // No job runner, so no dispatcher and no notification at all: only the heartbeat's catch-up can bring events.
  // TIME_SCALE shrinks the 15 s heartbeat to 150 ms.
  const svc = await startTestService(t, { config: { TIME_SCALE: '0.01' } });
  const tenant = await svc.createTenant();
  await svc.createEngagement(tenant, ENGAGEMENT);
  const session = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'fan-2', engagement_id: ENGAGEMENT } });
  assert.equal(session.status, 201, session.text);
  const badge = (code: string) => ({
    event: 'badge.earned.v1',
    participantId: 'fan-2',
    engagementId: ENGAGEMENT,
    data: { participant_id: 'fan-2', badge_code: code, badge_name: code, earned_at: new Date().toISOString() },
  });
  const emitNow = (code: string) => svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, [badge(code)]));
  const [before] = await emitNow('before');
  const stream = await openStream(svc, `session_id=${session.body.session_id}&engagement_id=${ENGAGEMENT}`);
  t.after(() => stream.close());
  assert.equal(stream.status, 200);
  const [after] = await emitNow('after');
  await waitFor('the event committed after the stream opened', () => stream.messages.some((m) => m.id === after));
  assert.ok(!stream.messages.some((m) => m.id === before), 'a fresh stream starts at the present: earlier events need Last-Event-ID');
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(stream.messages.filter((m) => m.id === after).length, 1, 'later heartbeats do not send it again');
  stream.close();
});
