import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { CampaignCalendar } from './campaign-calendar/campaign-calendar';
import { calendarStrings } from './strings';
import { calendarStringsDe } from './strings.de';

registerStrings(calendarStrings, calendarStringsDe);

/** The campaign calendar: every campaign of every kind on one timeline, for whoever reads the programs. */
export const calendarArea: ConsoleArea = {
  key: 'calendar',
  navigation: [{ to: '/calendar', label: 'calendar.nav', permission: 'programs:read' }],
  routes: [{ path: '/calendar', permission: 'programs:read', element: <CampaignCalendar /> }],
};
