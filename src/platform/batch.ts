import type { Tx } from './db.js';

/**
 * A processing batch: one transaction that applies many accepted events of
 * one tenant (src/modules/ingestion/lanes.ts). Processing asks the same
 * questions of every event ("which earn rules does `purchase` have?", "does
 * any streak count it?"); inside a batch each answer is read once and kept
 * for the rest of the transaction, so a batch pays per question, not per
 * event. Only definitions that processing never changes are kept this way.
 * A definition changed by another transaction while the batch runs applies
 * from the next batch on, as if the batch had run just before the change.
 *
 * Outside a batch `batchCached` returns null and callers read as usual.
 */
const batches = new WeakMap<Tx, Map<string, Promise<unknown>>>();

/** Runs `work` as a batch on `tx`; nested calls join the batch already open. */
export async function inBatch<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
  if (batches.has(tx)) return work();
  batches.set(tx, new Map());
  try {
    return await work();
  } finally {
    batches.delete(tx);
  }
}

/** The batch's answer for `key`, loading it on first use; null outside a batch. */
export function batchCached<T>(tx: Tx, key: string, load: () => Promise<T>): Promise<T> | null {
  const cache = batches.get(tx);
  if (!cache) return null;
  let found = cache.get(key) as Promise<T> | undefined;
  if (!found) {
    found = load();
    cache.set(key, found);
  }
  return found;
}

/**
 * Whether `name` can be among the names a batch keeps under `key`: true
 * outside a batch (the caller then asks its usual question), otherwise
 * whether the batch's set holds it. For definitions that processing looks up
 * by event name, where most events of most tenants match none.
 */
export async function mayMatchInBatch(tx: Tx, key: string, name: string, load: () => Promise<Iterable<string>>): Promise<boolean> {
  const names = batchCached(tx, key, async () => new Set(await load()));
  return names === null || (await names).has(name);
}
