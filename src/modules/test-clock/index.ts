import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { TestClock } from './schemas.js';

/**
 * The test clock of sandbox tenants: read, advance (running the tenant's due
 * lifecycle work), reset. The clock itself lives in platform/clock.ts and
 * platform/test-clock.ts; each module's `runDueWork` does the work.
 * Decisions: docs/decisions/foundation.md, Test controls.
 */
const testClockModule: ServiceModule = {
  name: 'test-clock',
  routes,
  schemas: [TestClock],
};
export default testClockModule;
