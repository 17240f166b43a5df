import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { programStrings } from './strings';
import { programStringsDe } from './strings.de';
import { RuleList } from './rule-list/rule-list';
import { RuleEdit } from './rule-edit/rule-edit';
import { TierList } from './tier-list/tier-list';
import { BadgeList } from './badge-list/badge-list';
import { StreakList } from './streak-list/streak-list';
import { MultiplierList } from './multiplier-list/multiplier-list';
import { PointsSettings } from './points-settings/points-settings';

registerStrings(programStrings, programStringsDe);

export const programsArea: ConsoleArea = {
  key: 'programs',
  heading: 'nav.groups.programs',
  navigation: [
    { to: '/programs/rules', label: 'nav.rules', permission: 'programs:read' },
    { to: '/programs/multipliers', label: 'nav.multipliers', permission: 'programs:read' },
    { to: '/programs/tiers', label: 'nav.tiers', permission: 'programs:read' },
    { to: '/programs/badges', label: 'nav.badges', permission: 'programs:read' },
    { to: '/programs/streaks', label: 'nav.streaks', permission: 'programs:read' },
    { to: '/programs/points-settings', label: 'nav.pointsSettings', permission: 'programs:read' },
  ],
  routes: [
    { path: '/programs/rules', permission: 'programs:read', element: <RuleList /> },
    { path: '/programs/rules/new', permission: 'programs:write', element: <RuleEdit /> },
    { path: '/programs/rules/:ruleId', permission: 'programs:read', element: <RuleEdit /> },
    { path: '/programs/multipliers', permission: 'programs:read', element: <MultiplierList /> },
    { path: '/programs/tiers', permission: 'programs:read', element: <TierList /> },
    { path: '/programs/badges', permission: 'programs:read', element: <BadgeList /> },
    { path: '/programs/streaks', permission: 'programs:read', element: <StreakList /> },
    { path: '/programs/points-settings', permission: 'programs:read', element: <PointsSettings /> },
  ],
};
