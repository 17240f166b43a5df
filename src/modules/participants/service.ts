/**
 * Participant profiles and privacy: coalescing profile values, masking every
 * read for callers without `read:pii`, logging every full read, custom field
 * definitions, and erasure (hard delete or anonymization).
 *
 * The use-cases that routes, schemas, reveal.ts and the index call, each from
 * the file of its part: masking.ts, access-log.ts, coalescing.ts,
 * profile-writes.ts (the explicit upserts), reads.ts (reads, list, search),
 * custom-fields.ts and erasure.ts; definition-cache.ts holds the cached custom
 * field definitions they share.
 */

export { DELETED_USER_LABEL, canReadPii, maskProfile, viewProfile, personalFieldsOf, type ProfileView } from './masking.js';
export { recordPiiAccessInTx, actorOf, type PiiAccess } from './access-log.js';
export { personalCustomKeys } from './definition-cache.js';
export { coalesceProfileInTx, type CoalesceResult } from './coalescing.js';
export {
  upsertProfile,
  writeProfileInTx,
  writeProfilesInTx,
  PROFILE_WRITES_MAX,
  type ProfileInput,
  type ProfileWrite,
  type ProfileWriteOutcome,
} from './profile-writes.js';
export {
  LIST_LIMIT_MAX,
  LIST_LIMIT_DEFAULT,
  SEARCH_ATTRIBUTES_MAX,
  readProfileView,
  readSessionParticipant,
  profileStatePart,
  listParticipants,
  searchParticipants,
} from './reads.js';
export { createCustomField, listCustomFields, readCustomField, updateCustomField, deleteCustomField } from './custom-fields.js';
export { anonymizeParticipant, deleteParticipant } from './erasure.js';
