import type { Database, Tx } from '../../platform/db.js';
import type { CustomFieldDefinition } from './fields.js';
import * as store from './store.js';

/**
 * The tenant's custom field definitions as coalescing, the upserts and the
 * search read them: cached briefly, since coalescing reads them for every event.
 */

const DEFINITION_CACHE_TTL_MS = 5_000;

interface CachedDefinitions {
  at: number;
  definitions: Map<string, CustomFieldDefinition>;
  /** The keys of the personal ones, for the masking step of answers. */
  personalKeys: ReadonlySet<string>;
}

const definitionCache = new Map<string, CachedDefinitions>();

function fresh(tenantId: string): CachedDefinitions | undefined {
  const cached = definitionCache.get(tenantId);
  return cached && Date.now() - cached.at < DEFINITION_CACHE_TTL_MS ? cached : undefined;
}

async function load(tx: Tx, tenantId: string): Promise<CachedDefinitions> {
  const definitions = new Map((await store.listCustomFields(tx, tenantId)).map((d) => [d.key, { key: d.key, type: d.type, personal: d.personal }]));
  const personalKeys = new Set([...definitions.values()].filter((definition) => definition.personal).map((definition) => definition.key));
  const entry = { at: Date.now(), definitions, personalKeys };
  definitionCache.set(tenantId, entry);
  return entry;
}

export async function customDefinitions(tx: Tx, tenantId: string): Promise<Map<string, CustomFieldDefinition>> {
  return (fresh(tenantId) ?? (await load(tx, tenantId))).definitions;
}

/** The keys of the tenant's personal custom fields, for the masking step of answers: from the cache without a transaction when it is fresh. */
export async function personalCustomKeys(db: Database, tenantId: string): Promise<ReadonlySet<string>> {
  return (fresh(tenantId) ?? (await db.tenant(tenantId, (tx) => load(tx, tenantId)))).personalKeys;
}

export function forgetDefinitions(tenantId: string): void {
  definitionCache.delete(tenantId);
}
