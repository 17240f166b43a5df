import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { ReviewList } from './review-list/review-list';
import { reviewStrings } from './strings';
import { reviewStringsDe } from './strings.de';

registerStrings(reviewStrings, reviewStringsDe);

export const reviewsArea: ConsoleArea = {
  key: 'reviews',
  heading: 'nav.groups.publishing',
  navigation: [{ to: '/reviews', label: 'nav.reviews', permission: 'programs:read' }],
  routes: [{ path: '/reviews', permission: 'programs:read', element: <ReviewList /> }],
};
