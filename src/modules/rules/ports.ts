import type { Tx } from '../../platform/db.js';
import * as participants from '../participants/index.js';
import { grantInTx, multiplierForEventInTx, readBalanceInTx } from '../points/index.js';

/**
 * The parts of other modules that earn rules call, reached through their
 * public `index.ts`. Profile coalescing and the birthday look-up belong to the
 * participants module and are called only when that module offers them.
 */
export const points = { grantInTx, multiplierForEventInTx, readBalanceInTx };

type CoalesceProfile = (
  tx: Tx,
  tenantId: string,
  participantId: string,
  properties: Record<string, unknown>,
  options?: { observedAt?: Date },
) => Promise<unknown>;

/**
 * The participants module's profile coalescing, when the build has it:
 * standard profile fields carried in event properties update the profile.
 */
export function coalesceProfile(): CoalesceProfile | null {
  const candidate = (participants as Record<string, unknown>).coalesceProfileInTx;
  return typeof candidate === 'function' ? (candidate as CoalesceProfile) : null;
}

type BirthdayParticipants = (tx: Tx, tenantId: string, input: { month: number; day: number; after: string | null; limit: number }) => Promise<string[]>;

/** The participants module's birthday look-up, when the build has it (needed by birthday rules). */
export function birthdayParticipants(): BirthdayParticipants | null {
  const candidate = (participants as Record<string, unknown>).participantsWithBirthdayInTx;
  return typeof candidate === 'function' ? (candidate as BirthdayParticipants) : null;
}
