import type { ServiceModule } from '../../platform/module.js';
import routes from './routes.js';
import { Conversion, ReferralCode, Stats } from './schemas.js';
import { statsInTx } from './service.js';

/** Referrals: codes, public validation and conversion with fraud checks, review, referrer milestones. */
const referralsModule: ServiceModule = {
  name: 'referrals',
  routes,
  schemas: [ReferralCode, Stats, Conversion],
  stateParts: {
    referrals: (tx, tenantId, participantId) => statsInTx(tx, tenantId, participantId, null),
  },
};
export default referralsModule;
