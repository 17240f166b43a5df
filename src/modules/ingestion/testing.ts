import { waitFor, type TestService, type TestTenant } from '../../../test/helper.js';

/** Helpers shared by the ingestion and rules tests. */
export async function waitProcessed(svc: TestService, eventIds: string[], timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `${eventIds.length} events to be processed`,
    async () => {
      const rows = await svc.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM ingested_events WHERE event_id = ANY($1::text[]) AND status IN ('processed', 'failed')`,
        [eventIds],
      );
      return rows[0].n === eventIds.length;
    },
    timeoutMs,
  );
}

let keyCounter = 0;
export function key(prefix = 'k'): string {
  keyCounter += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${keyCounter}`;
}

export async function sendSync(svc: TestService, tenant: TestTenant, event: Record<string, unknown>) {
  return svc.request('POST', '/api/v1/ingest/events/sync', { key: tenant.apiKey, body: { idempotency_key: key('sync'), ...event } });
}
