import type { ServiceModule } from '../../platform/module.js';
import { routes, rootRoutes } from './routes.js';
import { tasks } from './jobs.js';
import { Delivery, Destination, ReplayJob, WebhookSettings } from './schemas.js';
import { retention } from './store.js';

/**
 * Webhooks: destinations, the outbox dispatcher, signed and retried
 * deliveries with their logs and replays, the event catalog at
 * `/.well-known/events.json`, and the participant's live event stream.
 *
 * Other modules emit through `emit` (platform/outbox.ts) and may check their
 * payloads against the catalog with `validateEventData` in their tests.
 */
export { CATALOG, catalogEntry, isCatalogEvent, validateEventData } from './catalog.js';
export { signatureHeader } from './delivery.js';

const webhooksModule: ServiceModule = {
  name: 'webhooks',
  routes,
  rootRoutes,
  schemas: [Destination, Delivery, ReplayJob, WebhookSettings],
  tasks,
  retention,
};
export default webhooksModule;
