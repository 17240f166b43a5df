-- A grant and a deduct live once, in TypeScript (src/modules/points/ledger-store.ts:
-- `grantStatement`, `deductStatements`), for the route, the bulk job and the rule engine
-- alike; the idempotency claim lives once in src/platform/idempotency.ts. The SQL functions
-- that held second copies of them (migrations 0100, 0102, 0104 and 0105) go.
DROP FUNCTION points_direct_grant(uuid, text, text, timestamptz, timestamptz, text, bigint, text, text, text, text, text, text);
DROP FUNCTION points_direct_deduct(uuid, text, text, timestamptz, timestamptz, text, bigint, text, text, text, text, text);
DROP FUNCTION points_claim_key(uuid, text, text, text, timestamptz, timestamptz);
DROP FUNCTION points_iso(timestamptz);
DROP FUNCTION points_deduct(uuid, text, bigint, text, text, text, text, text, text, timestamptz);
