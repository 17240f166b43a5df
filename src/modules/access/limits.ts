import type { Database } from '../../platform/db.js';
import { announceCredentialChange, type Authenticator } from '../../platform/auth.js';
import { notFound } from '../../platform/errors.js';
import { clock } from '../../platform/clock.js';
import { effectiveLimits, type EffectiveLimit, type EffectiveLimits, type Plan } from '../../platform/plans.js';
import { overridesOf, readTenantLimits, type LimitRow } from '../../platform/tenant-limits.js';
import * as store from './store.js';
import type { OperatorLimitsInput } from './schemas.js';

/**
 * A tenant's limits: what is in force and where each figure comes from (read
 * by the tenant), and the operator's change of its plan and overrides.
 *
 * A tenant's admins never change these: the columns are written only here,
 * behind the operator's token (operator-auth.ts), and `PATCH /tenant` refuses
 * any field but the settings.
 */

const present = <T>(limit: EffectiveLimit<T>) => ({ value: limit.value, source: limit.source, plan_default: limit.planDefault, override: limit.override });

export function presentLimits(tenantId: string, plan: Plan, limits: EffectiveLimits) {
  return {
    tenant_id: tenantId,
    plan,
    limits: {
      requests_per_minute: present(limits.requestsPerMinute),
      event_ingestion_per_day: present(limits.eventIngestionPerDay),
      api_keys: present(limits.apiKeys),
      concurrent_engagements: present(limits.concurrentEngagements),
      participants_per_month: present(limits.participantsPerMonth),
      headless_sdk: present(limits.headlessSdk),
    },
  };
}

const presentRow = (tenantId: string, row: LimitRow) => presentLimits(tenantId, row.plan, effectiveLimits(row.plan, overridesOf(row)));

/** The tenant's own read (`GET /tenant/limits`). */
export async function readLimits(db: Database, tenantId: string) {
  const read = await db.tenant(tenantId, (tx) => readTenantLimits(tx, tenantId));
  if (!read) throw notFound('tenant');
  return presentLimits(tenantId, read.plan, read.limits);
}

/** The operator's read of any tenant's limits. */
export async function readLimitsAsOperator(db: Database, tenantId: string) {
  const read = await db.systemTx((tx) => readTenantLimits(tx, tenantId));
  if (!read) throw notFound('tenant', 'TENANT_NOT_FOUND');
  return presentLimits(tenantId, read.plan, read.limits);
}

export const OPERATOR_ACTOR = { actorId: 'operator', actorLabel: 'platform operator (OPERATOR_TOKEN)' };

/**
 * Changes a tenant's plan and overrides, records the change in the tenant's
 * audit log in the same transaction (before and after as `GET /tenant/limits`
 * shows them), and announces it: every process drops its cached credential
 * look-ups, which carry the plan and the request-rate figure, on commit
 * (NOTIFY), or at the latest when they expire (10 s). A plan change of a live
 * tenant is also its sandbox's (the sandbox's overrides stay its own). The quotas checked in a
 * transaction (API keys, engagements, ingestion) read the row itself.
 */
export async function updateLimitsAsOperator(
  db: Database,
  authenticator: Authenticator,
  tenantId: string,
  changes: OperatorLimitsInput,
  request: { id: string; route: string },
) {
  const result = await db.systemTx(async (tx) => {
    const locked = await store.lockTenantLimits(tx, tenantId);
    if (!locked) return null;
    const before = presentRow(tenantId, locked);
    const after = presentRow(tenantId, await store.updateTenantLimits(tx, tenantId, changes));
    // The sandbox follows the plan; its own overrides stay as they are.
    if (changes.plan !== undefined) await store.followPlanInSandbox(tx, tenantId, changes.plan);
    await store.insertAuditEntry(tx, tenantId, {
      at: clock.now(),
      ...OPERATOR_ACTOR,
      action: 'limits.update',
      method: 'PATCH',
      route: request.route,
      resourceType: 'tenant',
      resourceId: tenantId,
      before,
      after,
      details: { params: { tenant_id: tenantId }, body: changes },
      requestId: request.id,
    });
    await announceCredentialChange(tx, `tenant ${tenantId} limits`);
    return after;
  });
  if (!result) throw notFound('tenant', 'TENANT_NOT_FOUND');
  authenticator.forgetCredentials();
  return result;
}
