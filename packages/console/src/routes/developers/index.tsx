import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { WebhookList } from './webhook-list/webhook-list';
import { WebhookDetail } from './webhook-detail/webhook-detail';
import { EventCatalog } from './event-catalog/event-catalog';
import { ApiKeyList } from './api-key-list/api-key-list';
import { EventList } from './event-list/event-list';
import { EventDetail } from './event-detail/event-detail';
import { developerStrings } from './strings';
import { developerStringsDe } from './strings.de';

registerStrings(developerStrings, developerStringsDe);

export const developersArea: ConsoleArea = {
  key: 'developers',
  heading: 'nav.groups.developers',
  navigation: [
    { to: '/developers/api-keys', label: 'nav.apiKeys', permission: 'access:manage' },
    { to: '/developers/ingested-events', label: 'nav.ingestedEvents', permission: 'developers:read' },
    { to: '/developers/webhooks', label: 'nav.webhooks', permission: 'developers:read' },
    { to: '/developers/events', label: 'nav.eventCatalog', permission: 'developers:read' },
  ],
  routes: [
    { path: '/developers/api-keys', permission: 'access:manage', element: <ApiKeyList /> },
    { path: '/developers/ingested-events', permission: 'developers:read', element: <EventList /> },
    { path: '/developers/ingested-events/:eventId', permission: 'developers:read', element: <EventDetail /> },
    { path: '/developers/webhooks', permission: 'developers:read', element: <WebhookList /> },
    { path: '/developers/webhooks/:destinationId', permission: 'developers:read', element: <WebhookDetail /> },
    { path: '/developers/events', permission: 'developers:read', element: <EventCatalog /> },
  ],
};
