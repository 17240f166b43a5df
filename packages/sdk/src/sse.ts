import { errorFromResponse } from './errors.js';
import { parseRetryAfter } from './retry-after.js';
import type { StreamEvent } from './types.js';

/**
 * A server-sent-event reader over fetch (no EventSource), so that it runs the
 * same in browsers and in Node, and so that a refused stream (401, 404)
 * surfaces as a typed error instead of silent reconnects. It reconnects after
 * a drop with `Last-Event-ID`, waiting what the server's `retry:` line says
 * (or longer, when a refusal's `Retry-After` asks for it), and stops for good
 * on a 4xx other than 429.
 */
export const DEFAULT_RECONNECT_MS = 3_000;
/** A reconnect never waits longer than this, whatever `retry:` or `Retry-After` says. */
const MAX_RECONNECT_MS = 60_000;

export interface EventStreamOptions {
  url: string;
  fetch: typeof fetch;
  headers?: Record<string, string>;
  lastEventId?: string;
  onEvent: (event: StreamEvent) => void;
  onError?: (error: unknown) => void;
  /**
   * The server did not know the `Last-Event-ID` of a resume (events are kept
   * 30 days by default) and started the stream from now: events may have been
   * missed, so re-read the state.
   */
  onReset?: () => void;
}

interface ParsedMessage {
  id: string | null;
  event: string | null;
  data: string;
  retry: number | null;
}

/** Splits a buffer into complete messages; returns them and what is left over. */
export function parseEventStream(buffer: string): { messages: ParsedMessage[]; rest: string } {
  const messages: ParsedMessage[] = [];
  const normalized = buffer.replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const message: ParsedMessage = { id: null, event: null, data: '', retry: null };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
    }
    message.data = data.join('\n');
    messages.push(message);
  }
  return { messages, rest };
}

export function openEventStream(options: EventStreamOptions): () => void {
  const controller = new AbortController();
  let lastEventId = options.lastEventId;
  let reconnectMs = DEFAULT_RECONNECT_MS;
  /** The `Retry-After` of the last refusal (429, 503), which the next reconnect must not come before. */
  let retryAfterMs = 0;
  const report = (error: unknown) => {
    if (!controller.signal.aborted) options.onError?.(error);
  };

  async function readOnce(): Promise<'reconnect' | 'stop'> {
    const headers: Record<string, string> = { ...options.headers, accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await options.fetch(options.url, { headers, signal: controller.signal });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: keep the text.
      }
      const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
      retryAfterMs = (retryAfterSeconds ?? 0) * 1000;
      const error = errorFromResponse(response.status, body, { requestId: response.headers.get('x-request-id'), method: 'GET', url: options.url, retryAfterSeconds, apiVersion: response.headers.get('loyalty-version') });
      report(error);
      return response.status >= 400 && response.status < 500 && response.status !== 429 ? 'stop' : 'reconnect';
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'reconnect';
      buffer += decoder.decode(value, { stream: true });
      const { messages, rest } = parseEventStream(buffer);
      buffer = rest;
      for (const message of messages) {
        if (message.retry !== null) reconnectMs = Math.min(message.retry, MAX_RECONNECT_MS);
        if (message.id !== null) lastEventId = message.id;
        if (message.event === 'reset') {
          try {
            options.onReset?.();
          } catch (error) {
            report(error);
          }
          continue;
        }
        if (message.data === '') continue;
        let envelope: StreamEvent;
        try {
          envelope = JSON.parse(message.data) as StreamEvent;
        } catch (error) {
          report(error);
          continue;
        }
        try {
          options.onEvent(envelope);
        } catch (error) {
          report(error);
        }
      }
    }
  }

  void (async () => {
    while (!controller.signal.aborted) {
      let next: 'reconnect' | 'stop';
      try {
        next = await readOnce();
      } catch (error) {
        if (controller.signal.aborted) return;
        report(error);
        next = 'reconnect';
      }
      if (next === 'stop') return;
      const waitMs = Math.min(Math.max(reconnectMs, retryAfterMs), MAX_RECONNECT_MS);
      retryAfterMs = 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        controller.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  })();
  return () => controller.abort();
}
