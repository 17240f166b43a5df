/**
 * Contests: definition and publication, entries, real-time scoring from facts,
 * leaderboards, the lifecycle (scheduled → active → scoring → completed), the
 * final sweep with tie-breakers, prize allocation under the liability cap, the
 * verification hold with manual review, and the fraud controls.
 *
 * The use-cases that routes, jobs and the index call, each from the file of
 * its part: definition.ts, participant-reads.ts, entries.ts, scoring.ts,
 * lifecycle.ts (with prizes.ts) and reviews.ts; views.ts shapes the answers.
 */
export { createContest, updateContest, publishContest, publishContestInTx, contestForReviewInTx, readAdminContest, listAdminContests } from './definition.js';
export { readPublicContest, listActiveContests, prizes, publicLeaderboard, adminLeaderboard, bracket, winners } from './participant-reads.js';
export { enterAsParticipant, enterByServer, me, entryAdminView, statePart } from './entries.js';
export { scoreFactInTx } from './scoring.js';
export { ADVANCE_TASK, SWEEP_TASK, advanceContest, enqueueDueContests, advanceDueContests } from './lifecycle.js';
export { listReviews, decide } from './reviews.js';
