import { createHash, randomBytes, randomFillSync, randomUUID } from 'node:crypto';

/** Identifiers carry a type prefix so that a stray id says what it is (`evt_…`, `key_…`). */
export function prefixedId(prefix: string, bytes = 16): string {
  return `${prefix}_${randomHex(bytes)}`;
}

/** Random bytes drawn 4 KiB at a time: a hot request takes several ids, and one call per id cost a buffer each. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomHex(bytes: number): string {
  if (bytes > pool.length) return randomBytes(bytes).toString('hex');
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

export const uuid = (): string => randomUUID();

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);
