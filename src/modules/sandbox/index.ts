import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { SandboxView } from './schemas.js';

/**
 * Sandbox mode: a live tenant's paired sandbox, where its `lk_test_` keys act
 * on data of their own (docs/decisions/sandbox.md).
 */
const sandboxModule: ServiceModule = {
  name: 'sandbox',
  routes,
  schemas: [SandboxView],
};
export default sandboxModule;
