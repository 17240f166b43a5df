-- An erasure sends the tenant's exports back to the start from the code now: the participants
-- module runs the modules' erasure handlers in the erasure's transaction (platform/erasure.ts),
-- and the files module's handler does what the trigger of migration 1290 did
-- (files/exports.ts restartExportsAfterErasureInTx, files/store.ts restartExports), so reading
-- the files module tells what it writes (issue 33). The trigger and its function go.
DROP TRIGGER participant_erasures_restart_exports ON participant_erasures;
DROP FUNCTION files_restart_exports_after_erasure();
