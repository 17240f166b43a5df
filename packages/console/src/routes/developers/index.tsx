import type { ConsoleArea } from '../../lib/area';
import { WebhookList } from './webhook-list/webhook-list';
import { WebhookDetail } from './webhook-detail/webhook-detail';
import { EventCatalog } from './event-catalog/event-catalog';

export const developersArea: ConsoleArea = {
  key: 'developers',
  heading: 'nav.groups.developers',
  navigation: [
    { to: '/developers/webhooks', label: 'nav.webhooks', permission: 'developers:read' },
    { to: '/developers/events', label: 'nav.eventCatalog', permission: 'developers:read' },
  ],
  routes: [
    { path: '/developers/webhooks', permission: 'developers:read', element: <WebhookList /> },
    { path: '/developers/webhooks/:destinationId', permission: 'developers:read', element: <WebhookDetail /> },
    { path: '/developers/events', permission: 'developers:read', element: <EventCatalog /> },
  ],
};
