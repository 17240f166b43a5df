/**
 * The points use-cases. `…InTx` functions do the work inside a caller's
 * transaction (other modules compose them through index.ts); the others open
 * one transaction per call.
 *
 * Routes, jobs, schemas, the index, the tests and the benchmarks call them
 * here; each lives in the file of its part: ledger.ts (grant, deduct, the
 * balance), direct.ts, settings.ts, multipliers.ts, tiers.ts, expiry.ts,
 * reads.ts (history, participant reads, state parts) and bulk.ts.
 */
export {
  POINTS_PER_OPERATION_MAX,
  REASON_LENGTH_MAX,
  MEMO_LENGTH_MAX,
  GRANT_TYPES,
  DEDUCT_TYPES,
  type GrantType,
  type DeductType,
  type SourceKind,
  type Source,
  type GrantInput,
  type DeductInput,
  type LedgerResult,
  grantInTx,
  grantEachInTx,
  awardInTx,
  deductInTx,
  awardsSinceInTx,
  readBalanceInTx,
} from './ledger.js';
export { type DirectRequest, grantDirect, deductDirect, ledgerActorOf } from './direct.js';
export { REMINDER_DAYS_MAX, REMINDER_DAY_RANGE, readSettings, updateSettings } from './settings.js';
export {
  multiplierForEventInTx,
  createMultiplier,
  createMultiplierInTx,
  listMultipliers,
  readMultiplier,
  deleteMultiplier,
} from './multipliers.js';
export {
  TIER_REEVALUATION_TASK,
  listTiers,
  readTier,
  createTier,
  updateTier,
  deleteTier,
  reevaluateTiers,
} from './tiers.js';
export {
  EXPIRED_VISIBLE_DAYS,
  expireDuePoints,
  expireTenantPoints,
  sendExpiryReminders,
  sendTenantExpiryReminders,
} from './expiry.js';
export {
  HISTORY_PAGE_MAX,
  HISTORY_PAGE_DEFAULT,
  TRANSACTIONS_PAGE_MAX,
  TRANSACTIONS_PAGE_DEFAULT,
  TRANSACTIONS_OFFSET_MAX,
  LEDGER_TYPES,
  readHistory,
  sessionBalance,
  sessionTransactions,
  pointsStatePart,
  tierStatePart,
} from './reads.js';
export {
  BULK_GRANT_TASK,
  BULK_GRANT_PARTICIPANTS_MAX,
  type BulkGrantBody,
  startBulkGrant,
  readBulkGrant,
  runBulkGrant,
} from './bulk.js';
