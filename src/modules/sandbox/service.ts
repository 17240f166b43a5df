import type { Database } from '../../platform/db.js';
import { conflict, notFound } from '../../platform/errors.js';
import { ensureSandbox, sandboxPairOf, tenantEnvironment, type SandboxPair } from '../../platform/environments.js';
import type { SandboxView } from './schemas.js';

/**
 * A live tenant's sandbox: a tenant of its own, paired with the live one
 * (`tenants.live_tenant_id`), where the live tenant's `lk_test_` keys act.
 * See docs/decisions/sandbox.md.
 */
export function toSandboxView(pair: SandboxPair): SandboxView {
  return { live_tenant_id: pair.liveTenantId, sandbox_tenant_id: pair.sandboxTenantId, slug: pair.sandboxSlug, created_at: pair.sandboxCreatedAt };
}

/** The caller's pair, asked from either side; 404 when there is none. */
export async function readSandbox(db: Database, tenantId: string): Promise<SandboxPair> {
  const pair = await sandboxPairOf(db, tenantId);
  if (!pair) {
    const environment = await tenantEnvironment(db, tenantId);
    throw notFound(
      environment === 'sandbox' ? 'a live tenant for this sandbox (it was made on its own, with tenant:create --sandbox)' : 'a sandbox for this tenant (POST /tenant/sandbox makes it)',
      'SANDBOX_NOT_FOUND',
    );
  }
  return pair;
}

/** Makes the live tenant's sandbox, or returns the one it has. */
export async function openSandbox(db: Database, tenantId: string): Promise<SandboxPair & { created: boolean }> {
  if ((await tenantEnvironment(db, tenantId)) === 'sandbox') {
    throw conflict('this credential is a sandbox\'s: a sandbox is opened with a credential of its live tenant', 'SANDBOX_CREDENTIAL');
  }
  return ensureSandbox(db, tenantId);
}
