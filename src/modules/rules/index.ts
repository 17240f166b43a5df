import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { Caps, Condition, Conditions, CreateRuleBody, EarnRule, Effect, RuleVerdict } from './schemas.js';
import { RUN_TASK, TICK_TASK, runOccurrenceJob, scheduleTickJob } from './jobs.js';
/** A task name, for the sandbox reset. */
export { RUN_TASK } from './jobs.js';

/**
 * Earn rules: administration, the engine that applies them to processed
 * events, scheduled (birthday, recurring) rules, and simulation.
 */
export { applyEarnRulesInTx } from './engine.js';
export type { RuleEvent, RulesOutcome, AppliedRule, RuleVerdict } from './engine.js';
export { UnmatchedEventName } from './schemas.js';
export { coalesceProfile } from './ports.js';
export { startDueOccurrences, runOccurrence } from './jobs.js';
export { ruleForReviewInTx, publishRuleInTx, createRuleInTx, updateRuleInTx, ruleConfigFields } from './service.js';
export type { RuleRow } from './store.js';
export { ruleForExperimentInTx } from './experiment-variants.js';

const rulesModule: ServiceModule = {
  name: 'rules',
  routes,
  schemas: [Condition, Conditions, Effect, Caps, CreateRuleBody, EarnRule, RuleVerdict],
  tasks: { [TICK_TASK]: scheduleTickJob, [RUN_TASK]: runOccurrenceJob },
  crontab: [`*/15 * * * * ${TICK_TASK}`],
};
export default rulesModule;
