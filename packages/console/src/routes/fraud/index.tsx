import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { ReviewQueue } from './review-queue/review-queue';
import { fraudStrings } from './strings';
import { fraudStringsDe } from './strings.de';

registerStrings(fraudStrings, fraudStringsDe);

export const fraudArea: ConsoleArea = {
  key: 'fraud',
  heading: 'nav.groups.fraud',
  navigation: [{ to: '/fraud/reviews', label: 'nav.fraudReview', permission: 'fraud:read' }],
  routes: [{ path: '/fraud/reviews', permission: 'fraud:read', element: <ReviewQueue /> }],
};
