import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { ApiKeyRecord } from './schemas.js';
import { retention } from './store.js';

/** Access: tenants, admin login, API keys and participant sessions. */
export { createTenant, createSession } from './service.js';

const accessModule: ServiceModule = { name: 'access', routes, schemas: [ApiKeyRecord], retention };
export default accessModule;
