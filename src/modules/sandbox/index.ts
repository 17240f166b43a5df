import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import resetRoutes from './reset-routes.js';
import promotionRoutes from './promotion-routes.js';
import { promotionSchemas } from './promotion-schemas.js';
import { SandboxReset, SandboxResetBody, SandboxView } from './schemas.js';

/**
 * Sandbox mode: a live tenant's paired sandbox, where its `lk_test_` keys act
 * on data of their own (docs/decisions/sandbox.md).
 */
const sandboxModule: ServiceModule = {
  name: 'sandbox',
  routes: async (app, options) => { await routes(app, options); await resetRoutes(app, options); await promotionRoutes(app, options); },
  schemas: [SandboxView, SandboxResetBody, SandboxReset, ...promotionSchemas],
};
export default sandboxModule;
