import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { AppError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { CUSTOM_FIELDS_PER_TENANT_MAX, isStandardField, type CustomFieldType } from './fields.js';
import * as store from './store.js';
import { forgetDefinitions } from './definition-cache.js';
import { LIST_LIMIT_MAX } from './reads.js';

/**
 * Custom field definitions: create, list, read, change and delete, each
 * change dropping the cached definitions.
 */

export interface CustomFieldView {
  key: string;
  type: CustomFieldType;
  personal: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const fieldView = (record: store.CustomFieldRecord): CustomFieldView => ({
  key: record.key,
  type: record.type,
  personal: record.personal,
  description: record.description,
  created_at: record.createdAt.toISOString(),
  updated_at: record.updatedAt.toISOString(),
});

export async function createCustomField(
  db: Database,
  tenantId: string,
  input: { key: string; type: CustomFieldType; personal: boolean; description?: string },
): Promise<CustomFieldView> {
  if (isStandardField(input.key) || input.key === 'display_name') {
    throw invalid(`"${input.key}" is a standard profile field; custom fields need another key`, 'CUSTOM_FIELD_RESERVED_KEY');
  }
  const result = await db.tenant(tenantId, (tx) =>
    store.insertCustomField(tx, tenantId, { ...input, description: input.description ?? null }, clock.now(), CUSTOM_FIELDS_PER_TENANT_MAX),
  );
  if (!result.created && result.count >= CUSTOM_FIELDS_PER_TENANT_MAX) {
    throw ruleViolation(`a tenant may define at most ${CUSTOM_FIELDS_PER_TENANT_MAX} custom fields`, 'CUSTOM_FIELD_LIMIT_REACHED');
  }
  if (!result.created) throw new AppError('conflict', 'CUSTOM_FIELD_EXISTS', `the custom field "${input.key}" already exists`);
  forgetDefinitions(tenantId);
  return fieldView(result.created);
}

export async function listCustomFields(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? LIST_LIMIT_MAX;
  const after = decodeCursor(query.cursor, { key: 'text' });
  const rows = await db.tenant(tenantId, (tx) => store.listCustomFields(tx, tenantId, after?.key ?? null, limit + 1));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { fields: page.map(fieldView), next_cursor: rows.length > limit && last ? encodeCursor({ key: last.key }) : null };
}

export async function readCustomField(db: Database, tenantId: string, key: string): Promise<CustomFieldView> {
  const record = await db.tenant(tenantId, (tx) => store.readCustomField(tx, tenantId, key));
  if (!record) throw notFound('custom field');
  return fieldView(record);
}

export async function updateCustomField(db: Database, tenantId: string, key: string, changes: { personal?: boolean; description?: string | null }) {
  const record = await db.tenant(tenantId, (tx) => store.updateCustomField(tx, tenantId, key, changes, clock.now()));
  if (!record) throw notFound('custom field');
  forgetDefinitions(tenantId);
  return fieldView(record);
}

export async function deleteCustomField(db: Database, tenantId: string, key: string) {
  const record = await db.tenant(tenantId, (tx) => store.deleteCustomField(tx, tenantId, key));
  if (!record) throw notFound('custom field');
  forgetDefinitions(tenantId);
  return fieldView(record);
}
