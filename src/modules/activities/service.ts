/**
 * The activities use-cases that routes and the index call, each from the file
 * of its part: attempts.ts (the session, the shared checks, eligibility and
 * the attempt a call acts on), outcomes.ts (the wheel's draw, the quiz's
 * score), completion.ts (validate, complete with actions, and the read gates
 * use) and facts.ts (custom facts and completions reported by the server).
 */
export { eligibility } from './attempts.js';
export { weightedPick } from './outcomes.js';
export { validate, completedActivitiesInTx, OUTCOME_UNKNOWN_DETAIL } from './completion.js';
export { complete } from './completion-batches.js';
export { emitFact, reportCompletion } from './facts.js';
