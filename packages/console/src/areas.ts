import type { ConsoleArea } from './lib/area';
import { overviewArea } from './routes/overview';
import { participantsArea } from './routes/participants';
import { calendarArea } from './routes/calendar';
import { programsArea } from './routes/programs';
import { engagementsArea } from './routes/engagements';
import { audiencesArea } from './routes/audiences';
import { reviewsArea } from './routes/reviews';
import { competitionsArea } from './routes/competitions';
import { fraudArea } from './routes/fraud';
import { developersArea } from './routes/developers';
import { settingsArea } from './routes/settings';

/**
 * The console's sections, in the order of the navigation. A section adds
 * itself here once; its screens, links and strings stay in its own folder.
 */
export const AREAS: ConsoleArea[] = [
  overviewArea,
  participantsArea,
  calendarArea,
  programsArea,
  engagementsArea,
  audiencesArea,
  reviewsArea,
  competitionsArea,
  fraudArea,
  developersArea,
  settingsArea,
];

export const NAVIGATION = AREAS.flatMap((area) => area.navigation);
