import type { ServiceModule } from '../../platform/module.js';
import { participantsExport } from './export-source.js';
import routes from './routes.js';
import { CustomField, ParticipantIdSchema, ParticipantProfile } from './schemas.js';
import { personalCustomKeys, profileStatePart } from './service.js';
import { retention } from './retention.js';

/**
 * Participants: the people a tenant's events are about, their profiles, and
 * the privacy controls around them (masking, the access log, erasure).
 *
 * Other modules create participants on first sight through
 * `ensureParticipant`, check them with `participantExists`, feed profile
 * values with `coalesceProfileInTx`, write explicit upserts with
 * `writeProfileInTx` (one) or `writeProfilesInTx` (many, set-based: imports),
 * mask with `maskProfile`, and log full
 * reads of personal data they hand out (webhook deliveries) with
 * `recordPiiAccessInTx`.
 */
export { ensureParticipant, participantExists, PARTICIPANT_EXISTS_STATEMENT, readProfile as readProfileInTx } from './store.js';
/** Participants born on a month and day (birthday rules): `{ month, day, after, limit }`, ids in order. */
export { participantsWithBirthday as participantsWithBirthdayInTx } from './store.js';
export type { StoredProfile } from './store.js';
/** Test participants of a draft's preview: `createTestParticipant`, `isTestParticipant`, `deleteTestParticipants` (by id prefix). */
export { createTestParticipant as createTestParticipantInTx, isTestParticipant as isTestParticipantInTx, deleteTestParticipants as deleteTestParticipantsInTx } from './store.js';
/** Profiles in creation order after a keyset cursor, for bulk reads (exports): `(tx, tenantId, filters, after, limit)`. */
export { listProfiles as listProfilesInTx, listCustomFields as listCustomFieldsInTx } from './store.js';
export {
  coalesceProfileInTx,
  writeProfileInTx,
  writeProfilesInTx,
  PROFILE_WRITES_MAX,
  maskProfile,
  viewProfile,
  recordPiiAccessInTx,
  canReadPii,
  personalFieldsOf,
  DELETED_USER_LABEL,
  type CoalesceResult,
  type PiiAccess,
  type ProfileInput,
  type ProfileView,
  type ProfileWrite,
  type ProfileWriteOutcome,
} from './service.js';
export { STANDARD_FIELDS, MASKED_FIELDS } from './fields.js';

/** A participant id as it appears in requests: the tenant's own identifier. */
export const ParticipantId = ParticipantIdSchema;

const participantsModule: ServiceModule = {
  name: 'participants',
  exportSources: { participants: participantsExport },
  routes,
  schemas: [ParticipantProfile, CustomField],
  retention,
  stateParts: { profile: profileStatePart },
  personalCustomKeys,
};
export default participantsModule;
