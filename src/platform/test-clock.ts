import pg from 'pg';
import type { Database } from './db.js';
import type { Logger } from './logger.js';
import { clock } from './clock.js';

/**
 * Keeps every process's copy of the sandbox tenants' test clocks (table
 * `tenant_test_clocks`, migration 0901) in step with the database, so that
 * `clock.now(tenantId)` never queries. The process LISTENs on
 * TEST_CLOCK_CHANNEL first and then reads every row, so no change falls
 * between the two; whoever changes a clock announces it in the same
 * transaction (`announceTestClock`) and, on commit, every process applies it.
 * A lost listener connection is re-opened after RECONNECT_DELAY_MS and all
 * rows are read again.
 */
export const TEST_CLOCK_CHANNEL = 'tenant_clock_changed';
const RECONNECT_DELAY_MS = 1_000;

export async function announceTestClock(tx: { query: (sql: string, values: unknown[]) => Promise<unknown> }, tenantId: string, offsetMs: number): Promise<void> {
  await tx.query(`SELECT pg_notify('${TEST_CLOCK_CHANNEL}', $1)`, [JSON.stringify({ tenant_id: tenantId, offset_ms: offsetMs })]);
}

async function readAllOffsets(db: Database): Promise<Array<[string, number]>> {
  const { rows } = await db.system.query<{ tenant_id: string; offset_ms: string }>('SELECT tenant_id, offset_ms FROM tenant_test_clocks');
  return rows.map((r) => [r.tenant_id, Number(r.offset_ms)]);
}

export interface TestClockListener {
  close(): Promise<void>;
}

export async function listenForTestClocks(db: Database, systemUrl: string, log: Logger): Promise<TestClockListener> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const reconnectLater = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch(() => reconnectLater());
    }, RECONNECT_DELAY_MS);
    retry.unref();
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: systemUrl });
    const lost = () => {
      if (closed || client !== next) return;
      client = null;
      log.warn('test clock listener lost its connection; reconnecting');
      reconnectLater();
    };
    next.on('error', lost);
    next.on('end', lost);
    next.on('notification', (message) => {
      try {
        const change = JSON.parse(message.payload ?? '') as { tenant_id: string; offset_ms: number };
        clock.setTenantOffset(change.tenant_id, Number(change.offset_ms));
      } catch (error) {
        log.error({ err: error }, 'unreadable test clock notification');
      }
    });
    try {
      await next.connect();
      client = next;
      await next.query(`LISTEN ${TEST_CLOCK_CHANNEL}`);
      clock.replaceTenantOffsets(await readAllOffsets(db));
    } catch (error) {
      if (client === next) client = null;
      await next.end().catch(() => undefined);
      throw error;
    }
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
