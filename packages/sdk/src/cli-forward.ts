import { createHmac, randomBytes } from 'node:crypto';
import type { WebhookEnvelope } from './types.js';

/**
 * The forwarder's delivery: the envelope POSTed with the headers and the
 * signature of a real webhook delivery (src/modules/webhooks/delivery.ts):
 * `X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
 * keyed with the whole secret string, which `verifyWebhook` checks.
 */
const USER_AGENT = 'loyalty-sdk-listen/1';
/** The receiver's answer kept for the printed line. */
const ERROR_TEXT_MAX = 200;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function signatureHeader(secret: string, timestamp: number, rawBody: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

export interface ForwardResult {
  status: number | null;
  error: string | null;
  durationMs: number;
}

export async function forwardEnvelope(target: URL, envelope: WebhookEnvelope, secret: string, timeoutMs: number): Promise<ForwardResult> {
  const rawBody = JSON.stringify(envelope);
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-signature': signatureHeader(secret, timestamp, rawBody),
        'x-service-event': envelope.event,
        'x-service-timestamp': String(timestamp),
        'x-service-delivery-id': envelope.id,
      },
      body: rawBody,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The body is read (and dropped) so that the connection is released.
    await response.arrayBuffer().catch(() => undefined);
    return { status: response.status, error: null, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const text = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
    return { status: null, error: String(text).slice(0, ERROR_TEXT_MAX), durationMs: Math.round(performance.now() - started) };
  }
}
