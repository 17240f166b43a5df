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
  SOURCE_KINDS,
  type GrantType,
  type DeductType,
  type SourceKind,
  type Source,
  type GrantInput,
  type DeductInput,
  type LedgerResult,
  grantInTx,
  awardInTx,
  tierChangedEvent,
  insufficientPoints,
  deductInTx,
  awardsSinceInTx,
  readBalanceInTx,
  POINTS_BALANCE_MAX,
} from './ledger.js';
export { DIRECT_IDEMPOTENCY_SCOPE, type DirectRequest, type DirectResponse, grantDirect, deductDirect } from './direct.js';
export { REMINDER_DAYS_MAX, type SettingsBody, presentSettings, readSettings, updateSettings } from './settings.js';
export {
  multiplierForEventInTx,
  type MultiplierBody,
  presentMultiplier,
  createMultiplier,
  type MultiplierInput,
  createMultiplierInTx,
  listMultipliers,
  readMultiplier,
  deleteMultiplier,
} from './multipliers.js';
export {
  TIERS_PER_TENANT_MAX,
  TIER_REEVALUATION_TASK,
  TIER_REEVALUATION_BATCH,
  presentTier,
  listTiers,
  readTier,
  createTier,
  updateTier,
  deleteTier,
  reevaluateTiers,
} from './tiers.js';
export {
  EXPIRY_BATCH_LOTS,
  REMINDER_BATCH,
  EXPIRED_VISIBLE_DAYS,
  EXPIRY_PARALLEL,
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
  BULK_GRANT_BATCH,
  BULK_IDEMPOTENCY_SCOPE,
  type BulkGrantBody,
  BULK_FAILURES_LISTED_MAX,
  BULK_GRANT_PARALLEL,
  BULK_FAILURE_BALANCE_LIMIT,
  presentBulkJob,
  startBulkGrant,
  readBulkGrant,
  runBulkGrant,
} from './bulk.js';
