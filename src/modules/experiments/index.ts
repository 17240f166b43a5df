import type { ServiceModule } from '../../platform/module.js';
import { registerExperiments } from '../../platform/experiments.js';
import routes from './routes.js';
import { experimentVariantInTx, runningSubjectsInTx } from './exposure.js';
import { Experiment, CreateExperimentBody, Goal, Rollout } from './schemas.js';
import { runningUsesOf } from './store.js';

/**
 * Experiments (issue 36): participants split between variants of a rule, a
 * multiplier or an engagement, with a holdout; deterministic assignment
 * recorded at first exposure; roll-out of a variant through the normal way to
 * publish. The engines ask platform/experiments.ts (registered here) whether a
 * subject serves a participant, so that they need not import this module.
 */
export { assignVariant, bucketOf, HOLDOUT } from './assignment.js';
export { experimentVariantInTx, runningSubjectsInTx } from './exposure.js';
export type { ExperimentRow } from './store.js';
export type { ExperimentResponse } from './service.js';

registerExperiments({
  variant: experimentVariantInTx,
  subjects: runningSubjectsInTx,
  uses: (tx, tenantId, subjectType, subjectId) => runningUsesOf(tx, tenantId, subjectType, [subjectId], ''),
});

const experimentsModule: ServiceModule = {
  name: 'experiments',
  routes,
  schemas: [Goal, CreateExperimentBody, Experiment, Rollout],
};
export default experimentsModule;
