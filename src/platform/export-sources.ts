import type { Tx } from './db.js';
import type { AuthContext } from './auth.js';

/**
 * What each export kind reads, declared by the module that owns the data
 * (`exportSources` of its ServiceModule): the CSV columns, and a page
 * function that takes the cursor of the last page and returns the records
 * with the cursor after them (null at the end). A page is one statement on an
 * index order, so an export of a million rows is a million rows read in
 * pages, never a million rows held. The files module writes the pages into
 * files; it reads no other module's tables.
 */
export interface ExportFilters {
  from: string | null;
  to: string | null;
  contest_id: string | null;
  /** participants: only the members of this segment (issue 36); absent in exports asked for before it existed. */
  segment_id?: string | null;
}

export interface ExportPage {
  records: Array<Record<string, unknown>>;
  cursor: Record<string, unknown> | null;
}

export interface ExportPageContext {
  filters: ExportFilters;
  cursor: Record<string, unknown> | null;
  limit: number;
  /** The requester: what the page shows is what the API shows this caller (masking, the personal-data access log). */
  auth: AuthContext;
  format: 'csv' | 'jsonl';
}

export interface ExportSource {
  columns(tx: Tx, tenantId: string): Promise<string[]>;
  page(tx: Tx, tenantId: string, context: ExportPageContext): Promise<ExportPage>;
}

const sources = new Map<string, { module: string; source: ExportSource }>();

export function registerExportSource(module: string, kind: string, source: ExportSource): void {
  const known = sources.get(kind);
  if (known && known.module !== module) throw new Error(`two modules offer the export "${kind}": ${known.module} and ${module}`);
  sources.set(kind, { module, source });
}

/** The source of an export kind; a kind no loaded module offers is a programming error (the route's schema lists the kinds). */
export function exportSource(kind: string): ExportSource {
  const found = sources.get(kind);
  if (!found) throw new Error(`no module offers the export "${kind}"`);
  return found.source;
}
