import type { ConsoleArea } from '../../lib/area';

export const overviewArea: ConsoleArea = {
  key: 'overview',
  navigation: [{ to: '/', label: 'nav.overview', permission: 'analytics:read' }],
  // `/` is the start page (app.tsx): the overview for who may read it, else the first screen the role opens.
  routes: [],
};
