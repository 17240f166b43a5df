/**
 * Every SQL statement on the points tables. Each function is one statement
 * (a CTE where a change touches several tables) and takes the transaction and
 * the tenant first; every statement filters by tenant. The statements live in
 * the file of their part: ledger-store.ts (grants, deduct, balances),
 * settings-store.ts, multiplier-store.ts, tier-store.ts, expiry-store.ts,
 * history-store.ts (reads of the ledger) and bulk-store.ts.
 */
export * from './ledger-store.js';
export * from './settings-store.js';
export * from './multiplier-store.js';
export * from './tier-store.js';
export * from './expiry-store.js';
export * from './history-store.js';
export * from './bulk-store.js';
