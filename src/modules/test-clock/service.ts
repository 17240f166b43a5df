import type { Database } from '../../platform/db.js';
import type { Config } from '../../config.js';
import { clock } from '../../platform/clock.js';
import { AppError, invalid, ruleViolation } from '../../platform/errors.js';
import { isSandboxTenant } from '../../platform/environments.js';
import { announceTestClock } from '../../platform/test-clock.js';
import { loadModules, type ServiceModule } from '../../platform/module.js';
import * as store from './store.js';
import { ADVANCE_SECONDS_MAX, OFFSET_SECONDS_MAX, type AdvanceBody, type TestClock } from './schemas.js';

/**
 * The sandbox tenant's test clock (issue 16, item 7c), like Stripe's test
 * clocks: an admin moves the tenant's "now" forward, and the tenant's due
 * lifecycle work (contests, challenges, points expiry) runs during the call.
 * Live tenants are refused. Decisions: docs/decisions/foundation.md, Test controls.
 */
async function requireSandbox(db: Database, tenantId: string): Promise<void> {
  if (!(await isSandboxTenant(db, tenantId))) {
    throw new AppError(
      'forbidden',
      'SANDBOX_ONLY',
      "the test clock works only in the sandbox, and this key acts on live data: a live tenant's time is real time. Call it with one of the tenant's test keys (lk_test_…, made by POST /api/v1/events/api-keys with \"environment\": \"test\"), which acts in its sandbox",
    );
  }
}

function view(tenantId: string, offsetMs: number, advancedAt: Date | null): TestClock {
  const realNowMs = clock.nowMs();
  return {
    tenant_id: tenantId,
    environment: 'sandbox',
    now: new Date(realNowMs + offsetMs).toISOString(),
    real_now: new Date(realNowMs).toISOString(),
    offset_seconds: offsetMs / 1000,
    advanced_at: advancedAt ? advancedAt.toISOString() : null,
  };
}

export async function readTestClock(db: Database, tenantId: string): Promise<TestClock> {
  await requireSandbox(db, tenantId);
  const row = await db.tenant(tenantId, (tx) => store.readTestClock(tx, tenantId));
  return view(tenantId, row?.offset_ms ?? 0, row?.advanced_at ?? null);
}

let modulesWithDueWork: Promise<ServiceModule[]> | null = null;

/** Runs every module's due work for the tenant on its (new) clock, module by module in name order. */
async function runDueWork(db: Database, config: Config, tenantId: string): Promise<Record<string, number>> {
  modulesWithDueWork ??= loadModules().then((modules) => modules.filter((m) => m.runDueWork));
  const ran: Record<string, number> = {};
  for (const module of await modulesWithDueWork) Object.assign(ran, await module.runDueWork!({ db, config }, tenantId));
  return ran;
}

export async function advanceTestClock(db: Database, config: Config, tenantId: string, body: AdvanceBody) {
  if ((body.seconds === undefined) === (body.to === undefined)) {
    throw invalid('give either seconds or to (not both)', 'TEST_CLOCK_ADVANCE_INVALID');
  }
  await requireSandbox(db, tenantId);
  const advanced = await db.tenant(tenantId, async (tx) => {
    await store.lockTestClock(tx, tenantId);
    const row = await store.readTestClock(tx, tenantId, true);
    const offsetMs = row?.offset_ms ?? 0;
    const realNowMs = clock.nowMs();
    const previousNowMs = realNowMs + offsetMs;
    const stepMs = body.seconds !== undefined ? body.seconds * 1000 : new Date(body.to!).getTime() - previousNowMs;
    if (stepMs <= 0) {
      throw ruleViolation(`the test clock only moves forward: ${body.to} is not after the tenant's now (${new Date(previousNowMs).toISOString()}); DELETE it to go back to real time`, 'TEST_CLOCK_BACKWARDS');
    }
    if (stepMs > ADVANCE_SECONDS_MAX * 1000) {
      throw ruleViolation(`one advance moves the clock at most ${ADVANCE_SECONDS_MAX} seconds (400 days)`, 'TEST_CLOCK_STEP_TOO_LARGE');
    }
    const nextOffsetMs = offsetMs + stepMs;
    if (nextOffsetMs > OFFSET_SECONDS_MAX * 1000) {
      throw ruleViolation(`the tenant's clock may run at most ${OFFSET_SECONDS_MAX} seconds (five years) ahead of real time; DELETE it to start again`, 'TEST_CLOCK_OFFSET_TOO_LARGE');
    }
    const at = new Date(realNowMs);
    await store.writeTestClock(tx, tenantId, nextOffsetMs, at);
    await announceTestClock(tx, tenantId, nextOffsetMs);
    return { previousNowMs, nextOffsetMs, at };
  });
  // This process applies the new offset at once (the others on the notification), so the due work below sees it.
  clock.setTenantOffset(tenantId, advanced.nextOffsetMs);
  const ran = await runDueWork(db, config, tenantId);
  return { clock: view(tenantId, advanced.nextOffsetMs, advanced.at), previous_now: new Date(advanced.previousNowMs).toISOString(), ran };
}

export async function resetTestClock(db: Database, tenantId: string): Promise<TestClock> {
  await requireSandbox(db, tenantId);
  await db.tenant(tenantId, async (tx) => {
    await store.lockTestClock(tx, tenantId);
    await store.deleteTestClock(tx, tenantId);
    await announceTestClock(tx, tenantId, 0);
  });
  clock.setTenantOffset(tenantId, 0);
  return view(tenantId, 0, null);
}
