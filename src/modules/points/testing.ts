import assert from 'node:assert/strict';
import pg from 'pg';
import type { TestService } from '../../../test/helper.js';
import { findInvariantViolations } from './invariants.js';

/** Test helper: fails the test when any participant breaks a ledger invariant. */
export async function assertPointsInvariants(svc: TestService, tenantId: string | null = null): Promise<void> {
  const client = new pg.Client({ connectionString: svc.ownerUrl });
  await client.connect();
  try {
    const violations = await findInvariantViolations(client, tenantId);
    assert.deepEqual(violations, [], `points invariants broken: ${JSON.stringify(violations.slice(0, 5))}`);
  } finally {
    await client.end();
  }
}

/**
 * Test helper: gives a new participant `lifetime` points (available too) with a
 * consistent lot and ledger entry, written directly: amounts near the balance
 * limit (2^53 - 1) that no grant could reach in a test.
 */
export async function seedParticipantWithPoints(svc: TestService, tenantId: string, participantId: string, lifetime: number): Promise<void> {
  await svc.sql(
    `WITH p AS (INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $3) RETURNING participant_id),
          b AS (INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, updated_at) SELECT $1, participant_id, $2, $2, now() FROM p),
          l AS (INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, source_kind, available_after, lifetime_after, created_at)
                SELECT $1, participant_id, 'ple_seed_' || participant_id, 'award', $2, 'seed', 'grant', $2, $2, now() FROM p)
     INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
     SELECT $1, participant_id, $2, $2, 'ple_seed_' || participant_id, now(), now() + interval '365 days' FROM p`,
    [tenantId, lifetime, participantId],
  );
}
