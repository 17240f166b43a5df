import type { Tx } from './db.js';

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

const handlers: Array<{ module: string; handle: ErasureHandler }> = [];

export function registerErasureHandler(module: string, handle: ErasureHandler): void {
  if (!handlers.some((h) => h.module === module && h.handle === handle)) handlers.push({ module, handle });
}

/** Runs every module's reaction to the erasure, in module name order, inside the erasure's transaction. */
export async function runErasureHandlers(tx: Tx, tenantId: string, erasure: Erasure): Promise<void> {
  for (const { handle } of handlers) await handle(tx, tenantId, erasure);
}
