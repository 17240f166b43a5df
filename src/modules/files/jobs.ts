import type { JobHandler } from '../../platform/jobs.js';
import { isUuid } from '../../platform/ids.js';
import { IMPORT_TASK, runImport } from './imports.js';
import { EXPORT_TASK, runExport } from './exports.js';

/** The files module's background jobs: applying an import, writing an export. Both resume where a killed run stopped. */
function field(payload: unknown, name: 'tenant_id' | 'import_id' | 'export_id'): string {
  const value = (payload as Record<string, unknown> | null)?.[name];
  if (typeof value !== 'string' || (name === 'tenant_id' && !isUuid(value))) throw new Error(`the job payload has no valid ${name}`);
  return value;
}

const applyImport: JobHandler = async (payload, { db }) => runImport(db, field(payload, 'tenant_id'), field(payload, 'import_id'));
const writeExport: JobHandler = async (payload, { db }) => runExport(db, field(payload, 'tenant_id'), field(payload, 'export_id'));

export const tasks: Record<string, JobHandler> = { [IMPORT_TASK]: applyImport, [EXPORT_TASK]: writeExport };
