import type { Tx } from './db.js';
import { moduleHandlers } from './module-handlers.js';

/**
 * Reactions to a participant's erasure (a hard delete or an anonymization),
 * run by the participants module in the erasure's own transaction, after its
 * evidence row is written: what another module keeps of the participant
 * elsewhere is dealt with in the same commit. Each module declares its
 * reaction as `erasureHandler` in its ServiceModule (files: the exports
 * written before it are written again without the participant).
 */
export interface Erasure {
  participantId: string;
  action: 'delete' | 'anonymize';
}

export type ErasureHandler = (tx: Tx, tenantId: string, erasure: Erasure) => Promise<void>;

const handlers = moduleHandlers<[tx: Tx, tenantId: string, erasure: Erasure]>();

export const registerErasureHandler = handlers.register;

/** Runs every module's reaction to the erasure, in module name order, inside the erasure's transaction. */
export const runErasureHandlers = handlers.run;
