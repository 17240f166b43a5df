import { LoyaltyWebhookSignatureError } from './errors.js';
import type { WebhookEnvelope } from './types.js';

/**
 * Checks a webhook delivery exactly as the service signs it
 * (src/modules/webhooks/delivery.ts): `X-Service-Signature: t=<unix>,v1=<hex>`
 * where hex is HMAC-SHA256, keyed with the whole secret string (`whsec_…`),
 * over `<t>.<raw body>`. It runs on Web Crypto (`crypto.subtle`, in every
 * browser and in Node 20+), whose HMAC `verify` compares in constant time; the
 * Node-only synchronous variant with `timingSafeEqual` is `verifyWebhookSync`
 * in `@loyalty/sdk/node`.
 */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;
export const SIGNATURE_HEADER = 'x-service-signature';
/** A header longer than this is refused unread (one v1 signature is about 80 characters). */
const MAX_SIGNATURE_HEADER_LENGTH = 1_024;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined> | { get(name: string): string | null };

export interface ParsedSignature {
  timestamp: number;
  timestampText: string;
  signatures: string[];
}

export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads `t=<unix>,v1=<hex>[,v1=<hex>…]`; throws a LoyaltyWebhookSignatureError when it is missing or malformed. */
export function parseSignatureHeader(header: string | undefined): ParsedSignature {
  if (header === undefined || header.trim() === '') throw new LoyaltyWebhookSignatureError('missing_signature', 'the X-Service-Signature header is missing');
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH) throw new LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header is too long');
  let timestampText: string | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (key === 't') timestampText = value;
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  if (timestampText === null || !/^\d{1,12}$/.test(timestampText)) throw new LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header has no valid t=<unix timestamp>');
  if (signatures.length === 0) throw new LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header has no v1=<64 hex digits> signature');
  return { timestamp: Number(timestampText), timestampText, signatures };
}

export function checkTimestamp(timestamp: number, toleranceSeconds: number, nowSeconds: number): void {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) throw new RangeError('toleranceSeconds must be a number of 0 or more');
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new LoyaltyWebhookSignatureError(
      'timestamp_out_of_tolerance',
      `the signature's timestamp ${timestamp} is ${Math.abs(nowSeconds - timestamp)} s away from now; at most ${toleranceSeconds} s is accepted`,
    );
  }
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function rawBodyText(rawBody: string | Uint8Array): string {
  return typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
}

function parseEnvelope(text: string): WebhookEnvelope {
  return JSON.parse(text) as WebhookEnvelope;
}

export interface VerifyOptions {
  /** The current time in unix seconds (tests; default the clock). */
  nowSeconds?: number;
}

/**
 * Verifies a delivery and returns its parsed envelope. Throws
 * LoyaltyWebhookSignatureError (`reason`: missing_signature,
 * malformed_signature, timestamp_out_of_tolerance, signature_mismatch).
 * Pass the body exactly as received (string or bytes), before JSON parsing.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  options: VerifyOptions = {},
): Promise<WebhookEnvelope> {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhook: secret must be the destination\'s signing secret');
  const parsed = parseSignatureHeader(headerValue(headers, SIGNATURE_HEADER));
  checkTimestamp(parsed.timestamp, toleranceSeconds, options.nowSeconds ?? Math.floor(Date.now() / 1000));
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('verifyWebhook needs Web Crypto (crypto.subtle); in older Node use verifyWebhookSync from @loyalty/sdk/node');
  const encoder = new TextEncoder();
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const text = rawBodyText(rawBody);
  const signed = encoder.encode(`${parsed.timestampText}.${text}`);
  for (const signature of parsed.signatures) {
    // HMAC verify recomputes the tag and compares it in constant time.
    if (await subtle.verify('HMAC', key, hexToBytes(signature), signed)) return parseEnvelope(text);
  }
  throw new LoyaltyWebhookSignatureError('signature_mismatch', 'no signature in X-Service-Signature matches the body and the secret');
}
