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
 * A module may also hold back writes until the batch ends (`onBatchEnd`):
 * the points module writes a batch's grants with one statement.
 *
 * Outside a batch `batchCached` returns null and callers read as usual.
 */
interface Batch {
  cache: Map<string, Promise<unknown>>;
  state: Map<string, unknown>;
  endings: Array<() => Promise<void>>;
}
const batches = new WeakMap<Tx, Batch>();

/** Runs `work` as a batch on `tx`, then what was registered with `onBatchEnd`; nested calls join the batch already open. */
export async function inBatch<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
  if (batches.has(tx)) return work();
  const batch: Batch = { cache: new Map(), state: new Map(), endings: [] };
  batches.set(tx, batch);
  try {
    const result = await work();
    for (let ending = batch.endings.shift(); ending; ending = batch.endings.shift()) await ending();
    return result;
  } finally {
    batches.delete(tx);
  }
}

/**
 * State a module keeps for the batch on `tx` under `key`, made by `create` on
 * first use; null outside a batch. It goes with the batch, also when the
 * batch fails (a pooled connection serves the next transaction).
 */
export function batchState<T>(tx: Tx, key: string, create: () => T): T | null {
  const batch = batches.get(tx);
  if (!batch) return null;
  if (!batch.state.has(key)) batch.state.set(key, create());
  return batch.state.get(key) as T;
}

/** Registers `finish` to run when the batch on `tx` ends (before its transaction commits); false outside a batch. */
export function onBatchEnd(tx: Tx, finish: () => Promise<void>): boolean {
  const batch = batches.get(tx);
  if (!batch) return false;
  batch.endings.push(finish);
  return true;
}

/** The batch's answer for `key`, loading it on first use; null outside a batch. */
export function batchCached<T>(tx: Tx, key: string, load: () => Promise<T>): Promise<T> | null {
  const cache = batches.get(tx)?.cache;
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
