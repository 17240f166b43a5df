import type { ServiceModule } from '../../platform/module.js';
import { ledgerExport } from './export-source.js';
import routes from './routes.js';
import { Multiplier, LedgerEntry, Tier } from './schemas.js';
import { expireTenantPoints, pointsStatePart, sendTenantExpiryReminders, tierStatePart } from './service.js';
import { clock } from '../../platform/clock.js';
import { tasks, crontab } from './jobs.js';
import { multiplierEventTypes } from './multiplier-store.js';
/** Task names, for the sandbox reset. */
export { BULK_GRANT_TASK, TIER_REEVALUATION_TASK } from './service.js';

/**
 * Points: the ledger, balances, lots and expiry, multipliers, tiers, bulk
 * grants and the participant state read. This file is the module's public
 * surface; other modules import only what is exported here.
 */
export { grantInTx, grantEachInTx, awardInTx, deductInTx, readBalanceInTx, awardsSinceInTx, multiplierForEventInTx, createMultiplierInTx } from './service.js';
export { multiplierForExperimentInTx, endMultiplierInTx } from './experiment-multipliers.js';
export { GRANTS_SQL, LIFETIME_POINTS_SQL } from './standings.js';
export { REMINDER_DAY_RANGE } from './service.js';
export type { GrantInput, DeductInput, LedgerResult, Source, SourceKind, GrantType, DeductType } from './service.js';

const pointsModule: ServiceModule = {
  name: 'points',
  exportSources: { ledger: ledgerExport },
  routes,
  schemas: [Multiplier, LedgerEntry, Tier],
  tasks,
  runDueWork: async ({ db }, tenantId) => {
    const expired = await expireTenantPoints(db, tenantId, clock.now(tenantId));
    const reminders = await sendTenantExpiryReminders(db, tenantId, clock.now(tenantId));
    return { points_lots_expired: expired.lots, points_expired: expired.points, points_expiry_reminders: reminders };
  },
  crontab,
  batchQuestions: [multiplierEventTypes],
  stateParts: { points: pointsStatePart, tier: tierStatePart },
};
export default pointsModule;
