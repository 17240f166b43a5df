import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { EngagementRecord } from './schemas.js';

/**
 * Engagements: definitions (screens, components, canvas, activities, trigger
 * rules), publication, the public site read, embed URLs, eligibility and
 * impressions. The runtime modules find published activities and screens here.
 */
export { findPublishedActivityInTx, publishedDefinitionInTx, embedSettings, ANONYMOUS_PREFIX, type PublishedActivity } from './service.js';
export { parseCondition, type GateCondition } from './conditions.js';
export type { Action, Activity, Segment, EngagementDefinition } from './schemas.js';

const engagementsModule: ServiceModule = {
  name: 'engagements',
  routes,
  schemas: [EngagementRecord],
  // Sessions are issued only for engagements that exist (drafts included, so a tenant can test before publishing).
  engagementExists: async (tx, tenantId, engagementId) =>
    (await tx.query('SELECT 1 FROM engagements WHERE tenant_id = $1 AND id = $2', [tenantId, engagementId])).rowCount === 1,
};
export default engagementsModule;
