import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';

/** Gates: whether an engagement's screens are unlocked for a participant, and the screen visits they may require. */
const gatesModule: ServiceModule = { name: 'gates', routes };
export default gatesModule;
