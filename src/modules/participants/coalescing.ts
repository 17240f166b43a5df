import type { Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { checkCustomValue, checkStandardField, isStandardField, type CustomFieldDefinition, type StandardField } from './fields.js';
import * as store from './store.js';
import { customDefinitions } from './definition-cache.js';

/**
 * Coalescing: profile values taken from free-form properties (events, forms,
 * surveys) into the participant's profile.
 */

export interface CoalesceResult {
  /** Fields taken from the properties (standard names, custom ones as `custom.<key>`). */
  accepted: string[];
  /** Recognised fields whose values were malformed and left out, with why. */
  ignored: Array<{ field: string; reason: string }>;
  /** True when the participant is anonymized: nothing was written. */
  anonymized: boolean;
}

/**
 * Coalesces profile values from free-form properties (event properties, form
 * and survey submissions) into the participant's profile, creating the
 * participant if new. Keys named like a standard field or a defined custom
 * field are taken; blank values never erase; malformed values are ignored
 * (reported, never thrown) so that an event is not lost for a bad email; the
 * newest observation wins per field, except external_id, which only an
 * explicit upsert may change once set.
 */
export async function coalesceProfileInTx(
  tx: Tx,
  tenantId: string,
  participantId: string,
  properties: Record<string, unknown>,
  options: { observedAt?: Date } = {},
): Promise<CoalesceResult> {
  const observedAt = options.observedAt ?? clock.now();
  const result: CoalesceResult = { accepted: [], ignored: [], anonymized: false };
  const standard: Partial<Record<StandardField, string>> = {};
  const custom: Record<string, unknown> = {};
  const isBlank = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
  let definitions: Map<string, CustomFieldDefinition> | null = null;
  for (const [key, raw] of Object.entries(properties ?? {})) {
    if (isBlank(raw)) continue;
    if (isStandardField(key)) {
      const checked = checkStandardField(key, raw, clock.now());
      if (checked.ok) {
        standard[key] = checked.value;
        result.accepted.push(key);
      } else result.ignored.push({ field: key, reason: checked.reason });
      continue;
    }
    definitions ??= await customDefinitions(tx, tenantId);
    const definition = definitions.get(key);
    if (!definition) continue;
    const checked = checkCustomValue(definition, raw);
    if (checked.ok) {
      custom[key] = checked.value;
      result.accepted.push(`custom.${key}`);
    } else result.ignored.push({ field: `custom.${key}`, reason: checked.reason });
  }
  if (result.accepted.length === 0) return result;
  const { written } = await store.upsertProfile(tx, tenantId, participantId, standard, observedAt, 'coalesce');
  if (!written) return { accepted: [], ignored: result.ignored, anonymized: true };
  await store.upsertCustomValues(tx, tenantId, participantId, custom, observedAt);
  return result;
}
