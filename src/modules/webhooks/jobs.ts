import type { JobHandler } from '../../platform/jobs.js';
import { DISPATCH_TASK } from '../../platform/outbox.js';
import { isUuid } from '../../platform/ids.js';
import { attemptDeliveries } from './delivery.js';
import { runBulkReplay } from './service.js';
import { dispatch } from './dispatcher.js';
import { BULK_REPLAY_TASK, DELIVER_TASK } from './store.js';

/**
 * The module's background jobs:
 * - `outbox.dispatch` (added by the outbox pump for a tenant's events when
 *   the pump's own fan-out failed; dispatcher.ts): fans the events out into
 *   deliveries and notifies the live streams;
 * - `webhooks.deliver`: one attempt of each delivery it names (`delivery_ids`,
 *   a batch from the fan-out, or `delivery_id`, a retry); schedules the next;
 * - `webhooks.bulk_replay`: runs a bulk replay job.
 * A malformed payload is a programmer error: it is logged and dropped rather
 * than retried 25 times.
 */
function tenantOf(payload: unknown): { tenantId: string; body: Record<string, unknown> } | null {
  const body = (payload ?? {}) as Record<string, unknown>;
  return typeof body.tenant_id === 'string' && isUuid(body.tenant_id) ? { tenantId: body.tenant_id, body } : null;
}

const dispatchTask: JobHandler = async (payload, context) => {
  const parsed = tenantOf(payload);
  const ids = parsed?.body.event_ids;
  if (!parsed || !Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    context.log.error({ payload }, 'outbox.dispatch job with a malformed payload; dropped');
    return;
  }
  await dispatch(context, parsed.tenantId, ids as string[]);
};

const deliverTask: JobHandler = async (payload, context) => {
  const parsed = tenantOf(payload);
  const { delivery_id: one, delivery_ids: many } = parsed?.body ?? {};
  const ids = typeof one === 'string' ? [one] : Array.isArray(many) && many.length > 0 && many.every((id) => typeof id === 'string') ? (many as string[]) : null;
  if (!parsed || !ids) {
    context.log.error({ payload }, `${DELIVER_TASK} job with a malformed payload; dropped`);
    return;
  }
  await attemptDeliveries(context, parsed.tenantId, ids);
};

const bulkReplayTask: JobHandler = async (payload, context) => {
  const parsed = tenantOf(payload);
  if (!parsed || typeof parsed.body.job_id !== 'string') {
    context.log.error({ payload }, `${BULK_REPLAY_TASK} job with a malformed payload; dropped`);
    return;
  }
  await runBulkReplay(context, parsed.tenantId, parsed.body.job_id);
};

export const tasks: Record<string, JobHandler> = {
  [DISPATCH_TASK]: dispatchTask,
  [DELIVER_TASK]: deliverTask,
  [BULK_REPLAY_TASK]: bulkReplayTask,
};
