import type { Database, Tx } from '../../platform/db.js';
import type { CustomFieldDefinition } from './fields.js';
import * as store from './store.js';

/**
 * The tenant's custom field definitions as coalescing, the upserts and the
 * search read them: cached briefly, since coalescing reads them for every event.
 */

const DEFINITION_CACHE_TTL_MS = 5_000;

const definitionCache = new Map<string, { at: number; definitions: Map<string, CustomFieldDefinition> }>();

export async function customDefinitions(tx: Tx, tenantId: string): Promise<Map<string, CustomFieldDefinition>> {
  const cached = definitionCache.get(tenantId);
  if (cached && Date.now() - cached.at < DEFINITION_CACHE_TTL_MS) return cached.definitions;
  const definitions = new Map((await store.listCustomFields(tx, tenantId)).map((d) => [d.key, { key: d.key, type: d.type, personal: d.personal }]));
  definitionCache.set(tenantId, { at: Date.now(), definitions });
  return definitions;
}

/** The keys of the tenant's personal custom fields, for the masking step of answers (cached like the definitions). */
export async function personalCustomKeys(db: Database, tenantId: string): Promise<ReadonlySet<string>> {
  const definitions = await db.tenant(tenantId, (tx) => customDefinitions(tx, tenantId));
  return new Set([...definitions.values()].filter((definition) => definition.personal).map((definition) => definition.key));
}

export function forgetDefinitions(tenantId: string): void {
  definitionCache.delete(tenantId);
}
