import { registerStrings, type ConsoleArea } from '../../lib/area';
import { strings } from './strings';
import { stringsDe } from './strings.de';
import { SegmentList } from './segment-list/segment-list';
import { SegmentEdit } from './segment-edit/segment-edit';
import { ExperimentList } from './experiment-list/experiment-list';
import { ExperimentEdit } from './experiment-edit/experiment-edit';
import { ExperimentResults } from './experiment-results/experiment-results';

registerStrings(strings, stringsDe);

/** Segments (who a program is for) and experiments (whether it pays). */
export const audiencesArea: ConsoleArea = {
  key: 'audiences',
  heading: 'nav.groups.audiences',
  navigation: [
    { to: '/segments', label: 'nav.segments', permission: 'programs:read' },
    { to: '/experiments', label: 'nav.experiments', permission: 'programs:read' },
  ],
  routes: [
    { path: '/segments', permission: 'programs:read', element: <SegmentList /> },
    { path: '/segments/new', permission: 'programs:write', element: <SegmentEdit /> },
    { path: '/segments/:segmentId', permission: 'programs:read', element: <SegmentEdit /> },
    { path: '/experiments', permission: 'programs:read', element: <ExperimentList /> },
    { path: '/experiments/new', permission: 'programs:write', element: <ExperimentEdit /> },
    { path: '/experiments/:experimentId', permission: 'programs:read', element: <ExperimentEdit /> },
    { path: '/experiments/:experimentId/results', permission: 'analytics:read', element: <ExperimentResults /> },
  ],
};
