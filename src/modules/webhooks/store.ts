/**
 * Every SQL statement on the webhook tables. Each takes the transaction and
 * the tenant first and filters by the tenant. The statements live in the file
 * of their part: destination-store.ts (destinations and settings),
 * delivery-store.ts (fan-out, attempts, delivery reads), replay-store.ts (bulk
 * replays) and stream-store.ts (the live streams' reads); retention.ts holds
 * the log retention.
 */
export * from './destination-store.js';
export * from './delivery-store.js';
export * from './replay-store.js';
export * from './stream-store.js';
