import type { Tx } from './db.js';

/**
 * A segment's members as SQL, for the modules the segments module itself
 * depends on (participants: the export of a segment's members). Segments read
 * participants' profiles, so the participants module cannot import the
 * segments module's index without an import circle; it asks here instead, and
 * the segments module answers (registered when its index is loaded, before
 * the service serves). Every other module imports `membersSqlInTx` from
 * src/modules/segments/index.ts directly.
 */
export type SegmentMembersSql = (tx: Tx, tenantId: string, segmentId: string, firstParam: number, path?: string) => Promise<{ sql: string; params: unknown[] }>;

let provider: SegmentMembersSql | null = null;

export function registerSegmentMembersSql(fn: SegmentMembersSql): void {
  provider = fn;
}

/** `membersSqlInTx` of the segments module: its members as SQL selecting `participant_id`, placeholders from `$firstParam`. */
export function segmentMembersSqlInTx(tx: Tx, tenantId: string, segmentId: string, firstParam: number, path?: string): Promise<{ sql: string; params: unknown[] }> {
  if (!provider) throw new Error('segment members were asked for before the segments module was loaded');
  return provider(tx, tenantId, segmentId, firstParam, path);
}
