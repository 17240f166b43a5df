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
