import { createHmac, timingSafeEqual } from 'node:crypto';
import { LoyaltyWebhookSignatureError } from './errors.js';
import { DEFAULT_WEBHOOK_TOLERANCE_SECONDS, SIGNATURE_HEADER, checkTimestamp, headerValue, parseSignatureHeader, rawBodyText, type VerifyOptions, type WebhookHeaders } from './webhooks.js';
import type { WebhookEnvelope } from './types.js';

/**
 * `@loyalty/sdk/node`: Node-only helpers, kept out of the core entry so that
 * browser bundles never see `node:crypto`.
 */

/** The synchronous twin of verifyWebhook, with node:crypto's timingSafeEqual. Same checks, same errors. */
export function verifyWebhookSync(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  options: VerifyOptions = {},
): WebhookEnvelope {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhookSync: secret must be the destination\'s signing secret');
  const parsed = parseSignatureHeader(headerValue(headers, SIGNATURE_HEADER));
  checkTimestamp(parsed.timestamp, toleranceSeconds, options.nowSeconds ?? Math.floor(Date.now() / 1000));
  const text = rawBodyText(rawBody);
  const expected = createHmac('sha256', secret).update(`${parsed.timestampText}.${text}`).digest();
  // Both sides are 32 bytes (the parser only keeps 64-hex-digit signatures), as timingSafeEqual needs.
  const matched = parsed.signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
  if (!matched) throw new LoyaltyWebhookSignatureError('signature_mismatch', 'no signature in X-Service-Signature matches the body and the secret');
  return JSON.parse(text) as WebhookEnvelope;
}

export * from './index.js';
