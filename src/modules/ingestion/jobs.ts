import type { JobHandler } from '../../platform/jobs.js';
import { processEvents } from './service.js';

/**
 * Processes the events of one queued job (one participant bucket of one
 * write), each in its own transaction. Failures are recorded on the event and
 * retried on their own; the job goes on with the events behind them.
 */
export const processEventsJob: JobHandler = async (payload, { db, log }) => {
  const { tenant_id: tenantId, event_ids: eventIds } = payload as { tenant_id: string; event_ids: string[] };
  await processEvents(db, tenantId, eventIds, (eventId, error) => log.warn({ err: error, tenantId, eventId }, 'event processing failed'));
};
