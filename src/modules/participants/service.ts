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
export { PII_SCOPE } from '../../platform/privacy.js';
export { DELETED_USER_LABEL, canReadPii, maskProfile, viewProfile, personalFieldsOf, type ProfileView } from './masking.js';
export { recordPiiAccessInTx, actorOf, presentProfilesInTx, type PiiAccess } from './access-log.js';
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
  type SessionParticipantView,
  type ListQuery,
  type SearchQuery,
} from './reads.js';
export { createCustomField, listCustomFields, readCustomField, updateCustomField, deleteCustomField, type CustomFieldView } from './custom-fields.js';
export { anonymizeParticipant, deleteParticipant, type ErasureView } from './erasure.js';
