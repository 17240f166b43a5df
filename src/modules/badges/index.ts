import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { BadgeDefinition, BadgeStatus } from './schemas.js';
import { badgesStatePart } from './service.js';

/**
 * Badges: definitions, earned badges, the participant's status read. Other
 * modules award and check badges through `awardBadgeInTx` and `hasBadgeInTx`
 * inside their own transaction.
 */
export { awardBadgeInTx, hasBadgeInTx, missingBadgeCodesInTx, createBadgeInTx, updateBadgeInTx, earnedBadgeCodesInTx, earnedBadgesInTx } from './service.js';
export type { BadgeSource } from './service.js';

const badgesModule: ServiceModule = {
  name: 'badges',
  routes,
  schemas: [BadgeDefinition, BadgeStatus],
  stateParts: { badges: badgesStatePart },
};
export default badgesModule;
