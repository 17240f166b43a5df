import type { ServiceModule } from '../../platform/module.js';
import { rootRoutes } from './routes.js';

/**
 * The embeddable engagement runtime, served: the page at
 * `/embed/{tenantSlug}/{siteSlug}` (the embed URL of an engagement), the
 * runtime script and stylesheet built from `packages/runtime`, and in
 * development a demo host page at `/embed-demo/{tenantSlug}/{siteSlug}`.
 * It owns no table: the page runs on the public and session routes.
 */
const runtimeModule: ServiceModule = {
  name: 'runtime',
  rootRoutes,
};
export default runtimeModule;
