import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { ChallengeList } from './challenge-list/challenge-list';
import { ChallengeEdit } from './challenge-edit/challenge-edit';
import { ContestList } from './contest-list/contest-list';
import { ContestEdit } from './contest-edit/contest-edit';
import { ContestDetail } from './contest-detail/contest-detail';
import { LeaderboardList } from './leaderboard-list/leaderboard-list';
import { LeaderboardDetail } from './leaderboard-detail/leaderboard-detail';
import { Referrals } from './referrals/referrals';
import { competitionStrings } from './strings';
import { competitionStringsDe } from './strings.de';

registerStrings(competitionStrings, competitionStringsDe);

export const competitionsArea: ConsoleArea = {
  key: 'competitions',
  heading: 'nav.groups.competitions',
  navigation: [
    { to: '/competitions/challenges', label: 'nav.challenges', permission: 'programs:read' },
    { to: '/competitions/contests', label: 'nav.contests', permission: 'programs:read' },
    { to: '/competitions/leaderboards', label: 'nav.leaderboards', permission: 'programs:read' },
    { to: '/competitions/referrals', label: 'nav.referrals', permission: 'programs:read' },
  ],
  routes: [
    { path: '/competitions/challenges', permission: 'programs:read', element: <ChallengeList /> },
    { path: '/competitions/challenges/new', permission: 'programs:write', element: <ChallengeEdit /> },
    { path: '/competitions/challenges/:challengeId', permission: 'programs:read', element: <ChallengeEdit /> },
    { path: '/competitions/contests', permission: 'programs:read', element: <ContestList /> },
    { path: '/competitions/contests/new', permission: 'programs:write', element: <ContestEdit /> },
    { path: '/competitions/contests/:contestId', permission: 'programs:read', element: <ContestDetail /> },
    { path: '/competitions/contests/:contestId/edit', permission: 'programs:write', element: <ContestEdit /> },
    { path: '/competitions/leaderboards', permission: 'programs:read', element: <LeaderboardList /> },
    { path: '/competitions/leaderboards/:code', permission: 'programs:read', element: <LeaderboardDetail /> },
    { path: '/competitions/referrals', permission: 'programs:read', element: <Referrals /> },
  ],
};
