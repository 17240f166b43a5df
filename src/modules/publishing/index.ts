import type { ServiceModule } from '../../platform/module.js';
import { onAuditedChange } from '../../platform/audit.js';
import routes from './routes.js';
import { closeReviewPublishedDirectly } from './service.js';
import { Review, ReviewActor, ReviewBacktest } from './schemas.js';

/**
 * Publishing: review requests for drafts (rules, engagements, challenges,
 * contests) made by people without the publishing permission, approved or
 * returned by those with it. Who may publish directly is platform/publishing.ts.
 */
/** An experiment's roll-out sends its variant's draft through the normal review. */
export { submitReviewInTx } from './service.js';

// A direct publication closes the item's pending request (see closeReviewPublishedDirectly).
onAuditedChange(closeReviewPublishedDirectly);

const publishingModule: ServiceModule = {
  name: 'publishing',
  routes,
  schemas: [ReviewActor, ReviewBacktest, Review],
};
export default publishingModule;
