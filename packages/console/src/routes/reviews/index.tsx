import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { ReviewList } from './review-list/review-list';
import { reviewStrings } from './strings';
import { reviewStringsDe } from './strings.de';

registerStrings(reviewStrings, reviewStringsDe);

export const reviewsArea: ConsoleArea = {
  key: 'reviews',
  heading: 'nav.groups.publishing',
  // Those who author drafts or publish them (programs:write): the service refuses the queue to a fraud reviewer or an analyst.
  navigation: [{ to: '/reviews', label: 'nav.reviews', permission: 'programs:write' }],
  routes: [{ path: '/reviews', permission: 'programs:write', element: <ReviewList /> }],
};
