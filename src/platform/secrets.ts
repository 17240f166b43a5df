import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/**
 * The admin-token signing key: JWT_SECRET when set (required in production),
 * otherwise one generated on first start and kept in the database, so that
 * every process sharing the database signs and verifies with the same key.
 */
export async function loadJwtKey(system: pg.Pool, configured: string | null): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured);
  await system.query(`INSERT INTO service_secrets (name, value) VALUES ('jwt_secret', $1) ON CONFLICT (name) DO NOTHING`, [
    randomBytes(32).toString('hex'),
  ]);
  const { rows } = await system.query(`SELECT value FROM service_secrets WHERE name = 'jwt_secret'`);
  return new TextEncoder().encode(rows[0].value as string);
}
