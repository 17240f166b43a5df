import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLoyaltyClient, type StreamEvent } from '@loyalty/sdk';

/**
 * The live stream reader with a scripted server (the stream against the real
 * service is covered by the service's own stream tests): a resume the server
 * could not continue is reported through `onReset`, never as an event.
 */
const BASE_URL = 'http://127.0.0.1:9';

function streamOf(text: string): Response {
  return new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode(text)) }), {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
  });
}

test('a reset message calls onReset, and the events after it still arrive', async () => {
  const envelope = { id: 'evt_1', type: 'badge.earned.v1', data: {} };
  const sent: Array<Record<string, string>> = [];
  const fetchImpl: typeof fetch = async (_input, init) => {
    sent.push({ ...(init?.headers as Record<string, string>) });
    return streamOf(`retry: 3000\n\nevent: reset\ndata: {"reason":"last_event_id_unknown"}\n\nid: evt_1\ndata: ${JSON.stringify(envelope)}\n\n`);
  };
  const client = createLoyaltyClient({ baseUrl: BASE_URL, fetch: fetchImpl, session: { sessionId: 'ses_x', engagementId: 'eng_x' } });
  const events: StreamEvent[] = [];
  let resets = 0;
  const errors: unknown[] = [];
  const close = client.streamEvents({ lastEventId: 'evt_gone', onEvent: (event) => events.push(event), onReset: () => resets++, onError: (error) => errors.push(error) });
  try {
    for (let waited = 0; events.length === 0 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(sent[0]['last-event-id'], 'evt_gone');
    assert.equal(resets, 1);
    assert.deepEqual(events, [envelope]);
    assert.deepEqual(errors, []);
  } finally {
    close();
  }
});
