import type { ServiceModule } from '../../platform/module.js';
import { rootRoutes } from './routes.js';

/**
 * The console, served: the single-page app built from packages/console at
 * `/console` (every client-side path answers with the same page) and its
 * content-hashed script and stylesheet at `/console/assets/*`. It owns no
 * table: the app runs on the admin API with the console's cookie session.
 */
const consoleModule: ServiceModule = {
  name: 'console',
  rootRoutes,
};
export default consoleModule;
