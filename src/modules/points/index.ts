import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { Multiplier, LedgerEntry, Tier } from './schemas.js';
import { pointsStatePart, tierStatePart } from './service.js';
import { tasks, crontab } from './jobs.js';

/**
 * Points: the ledger, balances, lots and expiry, multipliers, tiers, bulk
 * grants and the participant state read. This file is the module's public
 * surface; other modules import only what is exported here.
 */
export { grantInTx, deductInTx, readBalanceInTx, awardsSinceInTx, multiplierForEventInTx, createMultiplierInTx } from './service.js';
export type { GrantInput, DeductInput, LedgerResult, Source, SourceKind, GrantType, DeductType } from './service.js';

const pointsModule: ServiceModule = {
  name: 'points',
  routes,
  schemas: [Multiplier, LedgerEntry, Tier],
  tasks,
  crontab,
  stateParts: { points: pointsStatePart, tier: tierStatePart },
};
export default pointsModule;
