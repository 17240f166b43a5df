import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { ConsoleUser } from './schemas.js';
import { retention } from './retention.js';

/** Console users: roles, sign-ins (cookie and CSRF), invitations, and the audit log's read. */
const usersModule: ServiceModule = { name: 'users', routes, schemas: [ConsoleUser], retention };
export default usersModule;
