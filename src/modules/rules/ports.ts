import * as participants from '../participants/index.js';
import { awardInTx, grantInTx, multiplierForEventInTx, readBalanceInTx } from '../points/index.js';

/**
 * The parts of other modules that earn rules call, reached through their
 * public `index.ts`.
 */
export const points = { awardInTx, grantInTx, multiplierForEventInTx, readBalanceInTx };

/** Standard profile fields carried in event properties update the participant's profile. */
export const coalesceProfile = participants.coalesceProfileInTx;

/** Participants whose date of birth falls on a day (birthday rules). */
export const birthdayParticipants = participants.participantsWithBirthdayInTx;
