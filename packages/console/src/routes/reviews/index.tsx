import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { ReviewList } from './review-list/review-list';

registerStrings({
  nav: { groups: { publishing: 'Publishing' }, reviews: 'Reviews' },
  reviews: {
    title: 'Reviews',
    intro: 'Drafts waiting for a publisher. Approving publishes the draft as it was submitted; returning sends it back to its author with your note.',
    status: 'Status',
    kind: 'Kind',
    allKinds: 'All kinds',
    item: 'Item',
    submittedBy: 'Submitted by',
    submittedAt: 'Submitted',
    note: 'Note',
    decision: 'Decision',
    none: 'No review request here.',
    statuses: { pending: 'Pending', approved: 'Approved', returned: 'Returned' },
    kinds: { rule: 'Earn rule', engagement: 'Engagement', challenge: 'Challenge', contest: 'Contest' },
    approve: 'Approve',
    approveNamed: 'Approve {{name}}',
    approveTitle: 'Approve “{{name}}”?',
    approveMessage: 'The {{kind}} is published now, exactly as it was submitted.',
    return: 'Return',
    returnNamed: 'Return {{name}}',
    returnTitle: 'Return “{{name}}” to its author?',
    returnMessage: 'It stays a draft. Say what should change.',
    returnNote: 'Note for the author',
    decidedBy: '{{status}} by {{who}}',
  },
});

export const reviewsArea: ConsoleArea = {
  key: 'reviews',
  heading: 'nav.groups.publishing',
  navigation: [{ to: '/reviews', label: 'nav.reviews', permission: 'programs:read' }],
  routes: [{ path: '/reviews', permission: 'programs:read', element: <ReviewList /> }],
};
