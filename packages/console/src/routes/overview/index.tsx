import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { overviewStrings } from './strings';
import { overviewStringsDe } from './strings.de';

registerStrings(overviewStrings, overviewStringsDe);

export const overviewArea: ConsoleArea = {
  key: 'overview',
  navigation: [{ to: '/', label: 'nav.overview', permission: 'analytics:read' }],
  // `/` is the start page (app.tsx): the overview for who may read it, else the first screen the role opens.
  routes: [],
};
