import type { ServiceModule } from '../../platform/module.js';
import { Type } from '@sinclair/typebox';

/**
 * Participants: the people a tenant's events are about. Other modules create
 * them on first sight through `ensureParticipant` and check them with
 * `participantExists`.
 */
export { ensureParticipant, participantExists } from './store.js';

/** A participant id as it appears in requests: the tenant's own identifier. */
export const ParticipantId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[^\\u0000-\\u001f]+$',
  description: "The tenant's identifier of the participant (1 to 128 characters, no control characters).",
});

const participantsModule: ServiceModule = { name: 'participants' };
export default participantsModule;
