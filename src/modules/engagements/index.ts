import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { EngagementRecord } from './schemas.js';
import * as store from './store.js';
import { checkSessionInTx } from './session-definition.js';

/**
 * Engagements: definitions (screens, components, canvas, activities, trigger
 * rules), publication, the public site read, embed URLs, eligibility and
 * impressions. The runtime modules find published activities and screens here.
 */
export { engagementForReviewInTx, publishEngagementInTx, createEngagementInTx, replaceEngagementDraftInTx } from './service.js';
export { unpublishEngagementInTx } from './service.js';
export { ACTIVITY_DEFAULTS, embedSettings, ANONYMOUS_PREFIX } from './service.js';
export { findPublishedActivityInTx, knownPublishedActivity, publishedActivityStatement, publishedDefinitionInTx, isPreviewInTx as isPreviewSessionInTx, type KnownActivity, type PublishedActivity } from './session-definition.js';
export { parseCondition, type GateCondition } from './conditions.js';
export type { Action, Activity, Segment, EngagementDefinition } from './schemas.js';

const engagementsModule: ServiceModule = {
  name: 'engagements',
  routes,
  schemas: [EngagementRecord],
  // Sessions are issued only for engagements that exist (drafts included, so a tenant can test before publishing).
  engagementExists: store.engagementExists,
  // An engagement for a segment gives sessions to its members only (targeting.ts).
  sessionCheck: checkSessionInTx,
};
export default engagementsModule;
