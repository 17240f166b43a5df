import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { settingsStrings } from './strings';
import { settingsStringsDe } from './strings.de';
import { Settings } from './settings';
import { AuditLog } from './audit-log/audit-log';

registerStrings(settingsStrings, settingsStringsDe);

export const settingsArea: ConsoleArea = {
  key: 'settings',
  heading: 'nav.groups.settings',
  navigation: [
    { to: '/settings', label: 'nav.settings', permission: 'settings:read' },
    { to: '/audit-log', label: 'nav.auditLog', permission: 'audit:read' },
  ],
  routes: [
    { path: '/settings', permission: 'settings:read', element: <Settings /> },
    { path: '/audit-log', permission: 'audit:read', element: <AuditLog /> },
  ],
};
