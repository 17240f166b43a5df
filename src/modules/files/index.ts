import type { ServiceModule } from '../../platform/module.js';
import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';
import routes from './routes.js';
import { ExportJob, ImportDryRun, ImportJob } from './schemas.js';
import { tasks } from './jobs.js';
/** Task names, for the sandbox reset (which deletes a sandbox's queued jobs). */
export { EXPORT_TASK } from './exports.js';
import { restartExportsAfterErasureInTx } from './exports.js';
export { IMPORT_TASK } from './imports.js';

/**
 * Files in and out: CSV and JSON lines imports of participants, point grants
 * and reward codes, and exports of participants (masked for the requester),
 * the ledger, contest results and webhook deliveries, as resumable background
 * jobs (docs/decisions/files.md). Nothing is exported to other modules.
 */

/** Imports (with their error reports) are kept this long; exports, which may hold personal data, shorter. */
export const IMPORT_RETENTION_DAYS = 30;
export const EXPORT_RETENTION_DAYS = 7;
/**
 * An import still `uploading` this long after it began belongs to an upload
 * whose process died (a refused upload deletes its own): it is deleted, its
 * rows first, in batches, and then the import.
 */
export const UPLOAD_ABANDONED_AFTER_DAYS = 1;

const abandonedUploads = `SELECT tenant_id, id FROM file_imports WHERE status = 'uploading' AND created_at < $2`;

const retention: RetentionRule[] = [
  {
    name: 'rows of abandoned import uploads',
    purge: (client, limit, now) =>
      deleteBatch(client, 'file_import_rows', `(tenant_id, import_id) IN (${abandonedUploads})`, [daysBefore(now, UPLOAD_ABANDONED_AFTER_DAYS)], limit),
  },
  {
    name: 'abandoned import uploads',
    purge: (client, limit, now) => deleteBatch(client, 'file_imports', `status = 'uploading' AND created_at < $2`, [daysBefore(now, UPLOAD_ABANDONED_AFTER_DAYS)], limit),
  },
  { name: 'file imports', purge: (client, limit, now) => deleteBatch(client, 'file_imports', 'created_at < $2', [daysBefore(now, IMPORT_RETENTION_DAYS)], limit) },
  { name: 'file exports', purge: (client, limit, now) => deleteBatch(client, 'file_exports', 'created_at < $2', [daysBefore(now, EXPORT_RETENTION_DAYS)], limit) },
];

const filesModule: ServiceModule = {
  name: 'files',
  routes,
  schemas: [ImportJob, ExportJob, ImportDryRun],
  tasks,
  // An erased participant's values leave every export written before: it is written again (exports.ts).
  erasureHandler: (tx, tenantId) => restartExportsAfterErasureInTx(tx, tenantId),
  retention,
};
export default filesModule;
