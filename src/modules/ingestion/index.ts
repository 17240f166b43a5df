import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { participantEventsRoutes } from './participant-events.js';
import { IngestEvent, StoredEvent } from './schemas.js';
import { PROCESS_TASK, retention } from './store.js';
import { processEventsJob } from './jobs.js';
import { lanePump } from './lanes.js';
import { scanEventsInTx } from './service.js';
/** A task name, for the sandbox reset. */
export { PROCESS_TASK } from './store.js';

/**
 * Event ingestion: the event store, the ingestion routes, the admin event
 * search, and the background processing that turns events into facts and
 * earn-rule effects.
 */
export { processEventInTx } from './service.js';

const ingestionModule: ServiceModule = {
  name: 'ingestion',
  // A participant's events for support sit beside the event store's own routes, in a file of their own.
  routes: async (app) => {
    await app.register(routes);
    await app.register(participantEventsRoutes);
  },
  schemas: [IngestEvent, StoredEvent],
  tasks: { [PROCESS_TASK]: processEventsJob },
  pumps: [lanePump],
  retention,
  eventScan: scanEventsInTx,
};
export default ingestionModule;
