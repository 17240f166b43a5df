import { registerStrings, type ConsoleArea } from '../../lib/area';
import { strings } from './strings';
import { stringsDe } from './strings.de';
import { EngagementList } from './engagement-list/engagement-list';
import { EngagementEdit } from './engagement-edit/engagement-edit';
import { RewardList } from './reward-list/reward-list';
import { RewardEdit } from './reward-edit/reward-edit';

registerStrings(strings, stringsDe);

export const engagementsArea: ConsoleArea = {
  key: 'engagements',
  heading: 'nav.groups.engagements',
  navigation: [
    { to: '/engagements', label: 'nav.engagements', permission: 'programs:read' },
    { to: '/rewards', label: 'nav.rewards', permission: 'programs:read' },
  ],
  routes: [
    { path: '/engagements', permission: 'programs:read', element: <EngagementList /> },
    { path: '/engagements/new', permission: 'programs:write', element: <EngagementEdit /> },
    { path: '/rewards', permission: 'programs:read', element: <RewardList /> },
    { path: '/rewards/:rewardId', permission: 'programs:read', element: <RewardEdit /> },
    { path: '/engagements/:engagementId', permission: 'programs:read', element: <EngagementEdit /> },
  ],
};
