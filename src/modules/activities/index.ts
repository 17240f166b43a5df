import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';

/**
 * Activities: server-decided spin wheels and quizzes, attempts and cooldowns,
 * completion with atomic on-completion actions, and facts (completions and
 * custom facts) handed to every module's fact handler in the same transaction.
 */
export { completedActivitiesInTx, weightedPick } from './service.js';

const activitiesModule: ServiceModule = { name: 'activities', routes };
export default activitiesModule;
