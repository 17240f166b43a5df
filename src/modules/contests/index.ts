import type { ServiceModule } from '../../platform/module.js';
import { contestResultsExport } from './export-source.js';
import routes from './routes.js';
import { sharedSchemas } from './schemas.js';
import { tasks, crontab } from './jobs.js';
import { advanceDueContests, scoreFactInTx, statePart } from './service.js';
import { scoredEventTypes } from './scoring-store.js';
/** A task name, for the sandbox reset. */
export { ADVANCE_TASK } from './service.js';

/**
 * Contests: time-bound competitions scored in real time from facts, with
 * leaderboards, a server-driven lifecycle, prize allocation after a
 * verification hold, and fraud controls. Decisions: docs/decisions/contests.md.
 */
const contestsModule: ServiceModule = {
  name: 'contests',
  exportSources: { contest_results: contestResultsExport },
  routes,
  schemas: sharedSchemas,
  tasks,
  crontab,
  factHandler: scoreFactInTx,
  batchQuestions: [scoredEventTypes],
  runDueWork: ({ db, config }, tenantId) => advanceDueContests(db, config, tenantId),
  stateParts: { contests: (tx, tenantId, participantId) => statePart(tx, tenantId, participantId) },
};
export { contestForReviewInTx, publishContestInTx } from './service.js';
export default contestsModule;
