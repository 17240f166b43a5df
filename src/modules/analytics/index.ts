import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { AnalyticsOverview } from './schemas.js';
import { Calendar } from './calendar-schemas.js';

/**
 * Analytics: the figures of the console's Overview (issue 18), read from the
 * tables of the modules that own them, plus counters of finished webhook
 * deliveries kept for good (migration 1010), which the webhooks module adds
 * to with `countFinishedDeliveriesSql`, a step of the statement that records each outcome; and
 * the campaign calendar (the windows of rules, multipliers, engagements,
 * challenges and contests on one timeline).
 */
export { countFinishedDeliveriesSql } from './delivery-counts.js';

const analyticsModule: ServiceModule = {
  name: 'analytics',
  routes,
  schemas: [AnalyticsOverview, Calendar],
};
export default analyticsModule;
