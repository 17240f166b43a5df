import type { ServiceModule } from '../../platform/module.js';
import { webhookDeliveriesExport } from './export-source.js';
import { routes, rootRoutes } from './routes.js';
import { tasks } from './jobs.js';
import { dispatchPump } from './dispatcher.js';
import { Delivery, Destination, ReplayJob, WebhookSettings } from './schemas.js';
import { retention } from './retention.js';
/** Task names, for the sandbox reset. */
export { BULK_REPLAY_TASK, DELIVER_TASK } from './store.js';

/**
 * Webhooks: destinations, the outbox dispatcher, signed and retried
 * deliveries with their logs, replays and test events, subscriptions by
 * pattern (`points.*`, `*`), the event catalog at `/.well-known/events.json`,
 * the participant's live event stream, and a sandbox tenant's event stream
 * (what the SDK's `loyalty listen` forwards).
 *
 * Other modules emit through `emit` (platform/outbox.ts) and may check their
 * payloads against the catalog with `validateEventData` in their tests.
 */
export { CATALOG, catalogEntry, isCatalogEvent, validateEventData } from './catalog.js';
export { signatureHeader } from './delivery.js';

const webhooksModule: ServiceModule = {
  name: 'webhooks',
  exportSources: { webhook_deliveries: webhookDeliveriesExport },
  routes,
  rootRoutes,
  schemas: [Destination, Delivery, ReplayJob, WebhookSettings],
  tasks,
  pumps: [dispatchPump],
  retention,
};
export default webhooksModule;
