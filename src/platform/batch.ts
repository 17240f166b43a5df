import { runStatements, withBatch, type Statement, type Tx, type TxBatch } from './db.js';

/**
 * A processing batch: one transaction that applies many accepted events of
 * one tenant (src/modules/ingestion/lanes.ts) or many rows of an import.
 * Processing asks the same questions of every event ("which earn rules does
 * `purchase` have?", "does any streak count it?"); inside a batch each answer
 * is read once and kept for the rest of the transaction, so a batch pays per
 * question, not per event. Only definitions that processing never changes are
 * kept this way. A definition changed by another transaction while the batch
 * runs applies from the next batch on, as if the batch had run just before
 * the change.
 *
 * A module may also hold back writes until the batch ends (`onEnd`): the
 * points module writes a batch's grants with one statement, the outbox the
 * batch's events with one statement. Held writes that later statements must
 * see are registered with `holdWrites`: the batch sends them before any
 * statement that reads what they change.
 *
 * The batch is explicit: `inBatch` hands its work the batch's transaction,
 * `tx` with `tx.batch` set, and the functions that behave differently in a
 * batch read that field of the transaction they are given. The same
 * connection without the field (the caller's `tx`) is a transaction outside
 * the batch: nothing it runs is held or cached.
 */
export class Batch implements TxBatch {
  private readonly cache = new Map<string, Promise<unknown>>();
  private readonly states = new Map<string, unknown>();
  private readonly endings: Array<() => Promise<void>> = [];
  private readonly lastEndings: Array<() => Promise<void>> = [];
  private readonly settlers: Array<{ reads: RegExp; settle: () => Promise<void> }> = [];
  private settling = false;

  /** State a module keeps for the batch under `key`, made by `create` on first use. */
  state<T>(key: string, create: () => T): T {
    if (!this.states.has(key)) this.states.set(key, create());
    return this.states.get(key) as T;
  }

  /** The batch's answer for `key`, loading it on first use. */
  cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    let found = this.cache.get(key) as Promise<T> | undefined;
    if (!found) {
      found = load();
      this.cache.set(key, found);
    }
    return found;
  }

  /** Registers `finish` to run when the batch's work is done, before its transaction commits, in registration order. */
  onEnd(finish: () => Promise<void>): void {
    this.endings.push(finish);
  }

  /** Registers `finish` to run after every `onEnd` (the outbox: the held writes have filled their events by then). */
  onLastEnd(finish: () => Promise<void>): void {
    this.lastEndings.push(finish);
  }

  /**
   * Registers held writes that every statement naming what `reads` matches
   * must see: the batch's transaction sends them first (the points module's
   * held grants, before any statement on a points table). Nothing can read
   * past them by forgetting to ask.
   */
  holdWrites(reads: RegExp, settle: () => Promise<void>): void {
    this.settlers.push({ reads, settle });
  }

  async settleBefore(text: string): Promise<void> {
    if (this.settling) return;
    for (const { reads, settle } of this.settlers) {
      if (!reads.test(text)) continue;
      this.settling = true;
      try {
        await settle();
      } finally {
        this.settling = false;
      }
    }
  }

  async end(): Promise<void> {
    for (let ending = this.endings.shift(); ending; ending = this.endings.shift()) await ending();
    for (let ending = this.lastEndings.shift(); ending; ending = this.lastEndings.shift()) await ending();
  }
}

/**
 * Runs `work` as a batch: `work` receives the batch's transaction (the same
 * connection, with `batch` set); what was registered with `onEnd` runs when
 * it is done. A transaction that is already a batch's is passed as it is
 * (nested batches join the open one). If `work` throws, nothing held is
 * written; the caller's transaction rolls back. `answers` are the batch's
 * questions answered already (`readWithQuestions`).
 */
export async function inBatch<T>(tx: Tx, work: (tx: Tx) => Promise<T>, answers: BatchAnswers = NO_ANSWERS): Promise<T> {
  if (tx.batch) return work(tx);
  const batch = new Batch();
  for (const [key, answer] of answers) batch.cached(key, () => Promise.resolve(answer));
  const batchTx = withBatch(tx, batch);
  const result = await work(batchTx);
  await batch.end();
  return result;
}

/** State a module keeps for the batch of `tx` (see Batch.state); null outside a batch. */
export function batchState<T>(tx: Tx, key: string, create: () => T): T | null {
  return tx.batch ? tx.batch.state(key, create) : null;
}

/** Registers `finish` to run when the batch of `tx` ends (before its transaction commits); false outside a batch. */
export function onBatchEnd(tx: Tx, finish: () => Promise<void>): boolean {
  tx.batch?.onEnd(finish);
  return tx.batch !== undefined;
}

/** The batch's answer for `key`, loading it on first use; null outside a batch. */
export function batchCached<T>(tx: Tx, key: string, load: () => Promise<T>): Promise<T> | null {
  return tx.batch ? tx.batch.cached(key, load) : null;
}

/**
 * A question that processing asks of every batch, whose answer is the same
 * for all the batch's events (which event names a streak counts, whether any
 * challenge enrollment is open): one read-only statement, `$1` the tenant.
 * Its module declares it (`batchQuestions` of its ServiceModule) and asks it
 * with `askBatch` or `mayMatchInBatch`. A batch that knows its tenant before
 * its work starts reads every declared question in the message of its first
 * statement (`readWithQuestions`), instead of one round trip per question
 * when an event first asks it.
 */
export interface BatchQuestion<T> {
  /** Unique across modules: `<module>:<what>`. */
  name: string;
  text: string;
  answer(rows: Array<Record<string, any>>): T;
}

/** Questions answered up front, by cache key. */
export type BatchAnswers = ReadonlyMap<string, unknown>;
const NO_ANSWERS: BatchAnswers = new Map();

const questions = new Map<string, BatchQuestion<unknown>>();

export function registerBatchQuestion(question: BatchQuestion<unknown>): void {
  if (questions.has(question.name) && questions.get(question.name) !== question) throw new Error(`two batch questions are named ${question.name}`);
  questions.set(question.name, question);
}

function questionKey(question: BatchQuestion<unknown>, tenantId: string): string {
  return `question:${question.name}:${tenantId}`;
}

/**
 * The batch's answer to `question` for the tenant, read on first use (or up
 * front); the answer the transaction read already (`withAnswers`), outside a
 * batch; otherwise null.
 */
export function askBatch<T>(tx: Tx, question: BatchQuestion<T>, tenantId: string): Promise<T> | null {
  const key = questionKey(question, tenantId);
  if (tx.answers?.has(key)) return Promise.resolve(tx.answers.get(key) as T);
  return batchCached(tx, key, async () => question.answer((await tx.query(question.text, [tenantId])).rows));
}

/**
 * Whether `name` can be among the names that `question` answers: true
 * outside a batch (the caller then asks its usual question), otherwise
 * whether the batch's set holds it. For definitions that processing looks up
 * by event name, where most events of most tenants match none.
 */
export async function mayMatchInBatch(tx: Tx, question: BatchQuestion<ReadonlySet<string>>, tenantId: string, name: string): Promise<boolean> {
  const names = askBatch(tx, question, tenantId);
  return names === null || (await names).has(name);
}

/**
 * Every declared batch question of the tenant as statements, for a caller
 * that sends them with its own, and how their rows answer (for `inBatch`, or
 * `withAnswers` outside a batch).
 */
export function questionStatements(tenantId: string): { statements: Statement[]; answers(rows: unknown[][]): BatchAnswers } {
  const asked = [...questions.values()];
  return {
    statements: asked.map((question) => ({ text: question.text, values: [tenantId] })),
    answers: (rows) => new Map(asked.map((question, i) => [questionKey(question, tenantId), question.answer(rows[i] as Array<Record<string, any>>)])),
  };
}

/**
 * Runs `statements` and every declared batch question of the tenant in one
 * message (`runStatements`): the statements' rows, and the answers for
 * `inBatch`.
 */
export async function readWithQuestions(tx: Tx, tenantId: string, statements: readonly Statement[]): Promise<{ rows: unknown[][]; answers: BatchAnswers }> {
  const asked = questionStatements(tenantId);
  const results = await runStatements(tx, [...statements, ...asked.statements]);
  return { rows: results.slice(0, statements.length), answers: asked.answers(results.slice(statements.length)) };
}

/**
 * Rounds of `items`: the n-th item of each key goes in round n, in the order
 * given. A set-based upsert changes a row once per statement, so a batch's
 * writes to one row (a participant's balance, its participation in an
 * activity) go one per round, each round a statement of its own.
 */
export function roundsOf<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    const round = seen.get(k) ?? 0;
    seen.set(k, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}
