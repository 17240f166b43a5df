import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { ParticipantStreak, StreakDefinition } from './schemas.js';
import { participantStreaksInTx } from './service.js';
import { SWEEP_TASK, sweepLapsedStreaksJob } from './jobs.js';
import { countedEventNames } from './store.js';

/** Streaks: daily and weekly streak definitions and each participant's streaks. */
export { continueStreaksInTx, continueStreaksForEventInTx, missingStreakCodesInTx, sweepLapsedStreaks, createStreakInTx, updateStreakInTx } from './service.js';
export type { StreakChange } from './service.js';

const streaksModule: ServiceModule = {
  name: 'streaks',
  routes,
  schemas: [StreakDefinition, ParticipantStreak],
  tasks: { [SWEEP_TASK]: sweepLapsedStreaksJob },
  crontab: [`5 * * * * ${SWEEP_TASK}`],
  batchQuestions: [countedEventNames],
  stateParts: {
    streaks: (tx, tenantId, participantId) => participantStreaksInTx(tx, tenantId, participantId),
  },
};
export default streaksModule;
