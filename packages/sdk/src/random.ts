/**
 * A random UUID (v4) for idempotency keys and attempt ids.
 * `crypto.randomUUID` exists only in secure contexts (https, localhost); an
 * embed served over plain http still has `crypto.getRandomValues`, so the
 * UUID is built from that there.
 */
export function randomUuid(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  if (typeof crypto?.getRandomValues !== 'function') throw new Error('no Web Crypto random source: pass generateIdempotencyKey to the client');
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
