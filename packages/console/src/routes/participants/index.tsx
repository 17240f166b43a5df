import type { ConsoleArea } from '../../lib/area';
import { ParticipantList } from './participant-list/participant-list';
import { ParticipantDetail } from './participant-detail/participant-detail';

export const participantsArea: ConsoleArea = {
  key: 'participants',
  navigation: [{ to: '/participants', label: 'nav.participants', permission: 'participants:read' }],
  routes: [
    { path: '/participants', permission: 'participants:read', element: <ParticipantList /> },
    { path: '/participants/:participantId', permission: 'participants:read', element: <ParticipantDetail /> },
  ],
};
