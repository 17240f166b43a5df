-- Issue 37 (and issue 33's grant): the rows written on every request no
-- longer check their tenant with a foreign key.
--
-- A foreign key check locks the referenced row FOR KEY SHARE. Every tenant
-- has one row in `tenants`, so every concurrent transaction of a tenant that
-- writes an event, an idempotency key or a session locked the same row: the
-- lock is recorded in the row's xmax, as a MultiXact of all the transactions
-- holding it, so each check rewrote that row's header (a WAL record on one
-- hot page) and grew a MultiXact in proportion to the transactions in flight.
-- A direct grant made three such checks (its idempotency key twice, inserted
-- then updated in one transaction, and its event).
--
-- The checks guarded nothing else: the tenant id of these rows is the
-- authenticated caller's (row-level security refuses any other: WITH CHECK
-- on app.tenant_id), tenants are never deleted (nothing in the service
-- deletes one; a tenant's data is reset or erased table by table), and
-- sessions and ingested events keep their key to participants, whose own key
-- to tenants implies the tenant. A write that waited on a participant a
-- sandbox reset then deleted fails that participant's key and is retried
-- (src/modules/sandbox/reset.ts). Measured with both variants in one run,
-- alternating every 2 s (`STATEMENTS_AB_SQL` in bench/points-statements.ts,
-- direct grants from 64 connections), twice: without these checks 3.8% and
-- 6.7% more grants per second, 3.6% and 6.1% less machine CPU per grant.
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_tenant_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_tenant_id_fkey;
ALTER TABLE event_idempotency_keys DROP CONSTRAINT event_idempotency_keys_tenant_id_fkey;
ALTER TABLE ingested_events DROP CONSTRAINT ingested_events_tenant_id_fkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_tenant_id_fkey;
