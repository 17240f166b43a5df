import type { ConsoleArea } from '../../lib/area';
import { registerStrings } from '../../lib/area';
import { participantStrings } from './strings';
import { participantStringsDe } from './strings.de';
import { ParticipantList } from './participant-list/participant-list';
import { ParticipantDetail } from './participant-detail/participant-detail';
import { ParticipantImport } from './participant-import/participant-import';
import { ParticipantExport } from './participant-export/participant-export';
import { BulkGrant } from './bulk-grant/bulk-grant';

registerStrings(participantStrings, participantStringsDe);

export const participantsArea: ConsoleArea = {
  key: 'participants',
  navigation: [{ to: '/participants', label: 'nav.participants', permission: 'participants:read' }],
  routes: [
    { path: '/participants', permission: 'participants:read', element: <ParticipantList /> },
    { path: '/participants/import', permission: 'participants:write', element: <ParticipantImport /> },
    { path: '/participants/bulk-grant', permission: 'participants:write', element: <BulkGrant /> },
    { path: '/participants/export', permission: 'participants:read', element: <ParticipantExport /> },
    { path: '/participants/:participantId', permission: 'participants:read', element: <ParticipantDetail /> },
  ],
};
