import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { Review, ReviewActor } from './schemas.js';

/**
 * Publishing: review requests for drafts (rules, engagements, challenges,
 * contests) made by people without the publishing permission, approved or
 * returned by those with it. Who may publish directly is platform/publishing.ts.
 */
const publishingModule: ServiceModule = {
  name: 'publishing',
  routes,
  schemas: [ReviewActor, Review],
};
export default publishingModule;
