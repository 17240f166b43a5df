import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { ClaimedReward, RewardRecord } from './schemas.js';
import { listClaimedInTx } from './service.js';

/**
 * Rewards: the catalogue (five types), code pools and generated codes,
 * inventory, expiry, and claims. Activities claim through `claimRewardInTx`.
 */
export { claimRewardInTx, previewClaimInTx, uploadCodesInTx, missingRewardIdsInTx, unavailableRewardIdsInTx, unavailableRewardIdsStatement, unavailableRewardIdsOf, displayTypeOf, createRewardInTx, updateRewardInTx } from './service.js';
export type { ClaimedReward } from './schemas.js';

/** Newest claims shown by the state read. */
const STATE_CLAIMS_MAX = 100;

const rewardsModule: ServiceModule = {
  name: 'rewards',
  routes,
  schemas: [RewardRecord, ClaimedReward],
  stateParts: {
    rewards: async (tx, tenantId, participantId) => (await listClaimedInTx(tx, tenantId, participantId, STATE_CLAIMS_MAX)).rewards,
  },
};
export default rewardsModule;
