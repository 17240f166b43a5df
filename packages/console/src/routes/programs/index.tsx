import type { ConsoleArea } from '../../lib/area';
import { RuleList } from './rule-list/rule-list';
import { RuleEdit } from './rule-edit/rule-edit';
import { TierList } from './tier-list/tier-list';
import { BadgeList } from './badge-list/badge-list';

export const programsArea: ConsoleArea = {
  key: 'programs',
  heading: 'nav.groups.programs',
  navigation: [
    { to: '/programs/rules', label: 'nav.rules', permission: 'programs:read' },
    { to: '/programs/tiers', label: 'nav.tiers', permission: 'programs:read' },
    { to: '/programs/badges', label: 'nav.badges', permission: 'programs:read' },
  ],
  routes: [
    { path: '/programs/rules', permission: 'programs:read', element: <RuleList /> },
    { path: '/programs/rules/new', permission: 'programs:write', element: <RuleEdit /> },
    { path: '/programs/rules/:ruleId', permission: 'programs:read', element: <RuleEdit /> },
    { path: '/programs/tiers', permission: 'programs:read', element: <TierList /> },
    { path: '/programs/badges', permission: 'programs:read', element: <BadgeList /> },
  ],
};
