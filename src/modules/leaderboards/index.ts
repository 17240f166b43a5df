import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { AdminLeaderboard, PublicLeaderboard } from './schemas.js';
import * as service from './service.js';
import { pointsTotalsFollower } from './totals.js';

/** Progression leaderboards: lifetime and period points, materialised rankings refreshed on a schedule. */
const leaderboardsModule: ServiceModule = {
  name: 'leaderboards',
  routes,
  schemas: [AdminLeaderboard, PublicLeaderboard],
  tasks: {
    'leaderboards.refresh': async (payload, { db }) => {
      const { tenant_id: tenantId, leaderboard_id: leaderboardId } = payload as { tenant_id: string; leaderboard_id: string };
      await service.refreshJob(db, tenantId, leaderboardId);
    },
    // Colon, not dot: graphile-worker's crontab refuses dots in task names.
    'leaderboards:schedule': async (_payload, { db }) => {
      await service.scheduleSweep(db);
    },
  },
  crontab: ['* * * * * leaderboards:schedule ?max=1'],
  outboxFollower: pointsTotalsFollower,
};
export default leaderboardsModule;
