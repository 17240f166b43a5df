import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { AdminChallenge, ProgressResponse, PublicChallenge } from './schemas.js';
import * as service from './service.js';
import { reevaluationFollower } from './reevaluation.js';
import { anyOpenEnrollment } from './store.js';

/**
 * Challenges: objectives, milestones, enrollment, progress from facts, and a
 * leaderboard per challenge. Other modules may use `evaluateParticipantInTx`
 * (re-evaluate a participant inside their transaction) and `resolvePublicCaller`.
 */
export { evaluateParticipantInTx, challengeForReviewInTx, moveChallengeInTx } from './service.js';
export { PUBLIC_CALLER_REFUSED, resolvePublicCaller, type PublicCaller } from './public-tenant.js';
export { grantPointsInTx, awardBadgeInTx, checkBadgesExistInTx } from './progression.js';

const challengesModule: ServiceModule = {
  name: 'challenges',
  routes,
  schemas: [AdminChallenge, PublicChallenge, ProgressResponse],
  factHandler: service.handleFact,
  batchQuestions: [anyOpenEnrollment],
  outboxFollower: reevaluationFollower,
  tasks: {
    // Records the status moves made by time (scheduled → active → ended). The name has a
    // colon, not a dot, because graphile-worker's crontab accepts no dots in task names.
    'challenges:lifecycle': async (_payload, { db }) => {
      await service.runLifecycle(db);
    },
    // Re-reads points and badges for state objectives after a grant (queued by the module's outbox follower, reevaluation.ts).
    'challenges.reevaluate': async (payload, { db }) => {
      const { tenant_id: tenantId, participant_id: participantId } = payload as { tenant_id: string; participant_id: string };
      await service.reevaluate(db, tenantId, participantId);
    },
  },
  crontab: ['* * * * * challenges:lifecycle ?max=1'],
  runDueWork: async ({ db }, tenantId) => ({ challenge_status_moves: await service.runTenantLifecycle(db, tenantId) }),
  stateParts: {
    challenges: (tx, tenantId, participantId) => service.statePart(tx, tenantId, participantId),
  },
};
export default challengesModule;
