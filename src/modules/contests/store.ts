/**
 * Every SQL statement on the contest tables. Each function takes the
 * transaction and the tenant first and filters by the tenant. The statements
 * live in the file of their part: contest-store.ts (the contests table and the
 * row shapes), entry-store.ts (entries and leaderboards), scoring-store.ts,
 * lifecycle-store.ts (rank ticks and final ranks), prize-store.ts and
 * review-store.ts.
 */
export * from './contest-store.js';
export * from './entry-store.js';
export * from './scoring-store.js';
export * from './lifecycle-store.js';
export * from './prize-store.js';
export * from './review-store.js';
