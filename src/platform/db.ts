import pg from 'pg';
import { DEFAULT_POOL_IDLE_SECONDS } from '../config.js';
import { isUuid } from './ids.js';
import { inlineStatement } from './sql-literals.js';
import { currentContext, inContext, tracingOn } from './tracing.js';
import { traceQueries, traceTransaction } from './tracing-db.js';
import { isStalePlan, planEachCall, prepareStatements, PREPARED_PER_CONNECTION_MAX, sendExtended } from './db-extended.js';
import { lowerBackendPriority } from './background-priority.js';
import type { Context } from '@opentelemetry/api';

/** Sets the transaction's tenant, the setting row-level security reads. */
const SET_TENANT = "SELECT set_config('app.tenant_id', $1, true)";
/** A transaction's statements planned once per connection (`Plans`). */
const GENERIC_PLANS = "set_config('plan_cache_mode', 'force_generic_plan', true)";
/** The tenant, and generic plans for the rest of the transaction (`tenantInOneTrip`). */
const SET_TENANT_GENERIC = `SELECT set_config('app.tenant_id', $1, true), ${GENERIC_PLANS}`;

/** Refuses a tenant id that is not a UUID: callers inline it in SQL text. */
function checkTenantId(tenantId: string): void {
  if (!isUuid(tenantId)) throw new Error(`tenant id must be a UUID, got ${JSON.stringify(tenantId)}`);
}

/**
 * BEGIN and the tenant setting as one text, so that they travel in one round
 * trip; the tenant id is checked to be a UUID first, so it can be inlined.
 */
function beginWithTenant(tenantId: string, mode: '' | 'READ ONLY' = ''): string {
  checkTenantId(tenantId);
  return `BEGIN${mode ? ` ${mode}` : ''}; SELECT set_config('app.tenant_id', '${tenantId}', true)`;
}

/**
 * How a transaction's prepared statements are planned (`plan_cache_mode`, local to it): `auto`, as
 * PostgreSQL chooses (custom plans for each call's values until a generic one costs no more), or
 * `generic`, planned once per connection, for hot transactions whose statements each find a few rows
 * by key.
 */
export type Plans = 'auto' | 'generic';

/** A read-only transaction of `texts` (their parameters inlined) as one message: `tenantReadAll`, `staleReadAll`. */
function readMessage(tenantId: string, texts: readonly string[], values: readonly unknown[]): string {
  return `${beginWithTenant(tenantId, 'READ ONLY')}; ${texts.map((text) => inlineStatement(text, values)).join('; ')}; COMMIT`;
}

/** BEGIN and COMMIT as statements of an extended message (`tenantFramedBy`, `tenantEndingWith`). */
const BEGIN: Statement = { text: 'BEGIN', values: [] };
const COMMIT: Statement = { text: 'COMMIT', values: [] };

/** A transaction's work whose last statements (`last`) travel with its COMMIT, in one message. */
function endingWithCommit<T>(
  fn: (tx: Tx, started: pg.QueryResult) => Promise<{ result: T; last: readonly Statement[] }>,
): (tx: Tx, started: pg.QueryResult) => Promise<T> {
  return async (tx, started) => {
    const { result, last } = await fn(tx, started);
    const ending = [...last, COMMIT];
    await settleBefore(tx, ending);
    await committing(sendStatements(tx, ending));
    return result;
  };
}

/**
 * The message that carried a transaction's COMMIT failed without the
 * database's answer (a lost connection, a client-side timeout, an answer the
 * client could not read): the transaction may or may not have committed.
 * `Database` never runs such a transaction again, and a caller whose work is
 * not idempotent must not either (a batch of completions answers 503
 * `COMPLETION_OUTCOME_UNKNOWN`; any other request 503 `COMMIT_OUTCOME_UNKNOWN`).
 * A failure the database answered (a `pg.DatabaseError`) is thrown as it is:
 * the transaction ended without committing.
 */
export class CommitOutcomeUnknown extends Error {
  constructor(cause: unknown) {
    super(`the answer to a transaction's COMMIT was lost (${(cause as Error)?.message ?? String(cause)}): it may or may not have committed`, { cause });
  }
}

/** Whether `error` is a `CommitOutcomeUnknown` or was caused by one (its `cause` chain). */
export function lostCommit(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause instanceof CommitOutcomeUnknown) return true;
  return false;
}

/** `sending`, the message that commits a transaction: a failure the database did not answer becomes `CommitOutcomeUnknown`. */
async function committing<T>(sending: Promise<T>): Promise<T> {
  try {
    return await sending;
  } catch (error) {
    throw error instanceof pg.DatabaseError ? error : new CommitOutcomeUnknown(error);
  }
}

/** A statement and its parameter values. */
export interface Statement {
  text: string;
  values: readonly unknown[];
}

/**
 * Runs `statements` on `tx` as ONE extended-protocol message (`sendExtended`):
 * one write and one round trip, each statement parsed once per connection
 * under a name (with DB_PREPARED_STATEMENTS) and then only bound and executed,
 * and each seeing what the ones before it wrote, with a snapshot of its own
 * (so a statement after a row lock reads the rows as they are once the lock is
 * held). The first error skips the rest. Returns each statement's rows, in
 * order. In a batch's transaction the held writes a statement must see are
 * written first (`TxBatch.settleBefore`).
 */
export async function runStatements(tx: Tx, statements: readonly Statement[]): Promise<unknown[][]> {
  if (statements.length === 0) return [];
  await settleBefore(tx, statements);
  return sendStatements(tx, statements);
}

/** In a batch's transaction, the held writes that `statements` must see, written first. */
async function settleBefore(tx: Tx, statements: readonly Statement[]): Promise<void> {
  if (tx.batch) for (const { text } of statements) await tx.batch.settleBefore(text);
}

/** `statements` as one extended message on `tx`'s connection; each one's rows. */
async function sendStatements(tx: Tx, statements: readonly Statement[]): Promise<unknown[][]> {
  const client = clientOf(tx);
  const results = await sendExtended(client, statements, namedClients.has(client));
  return results.map((result) => result.rows);
}

function asResults(result: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] {
  return Array.isArray(result) ? result : [result];
}

/** The connections whose pool prepares statements (DB_PREPARED_STATEMENTS): `runStatements` parses each text once on them, under a name. */
const namedClients = new WeakSet<pg.ClientBase>();

/**
 * The database layer's pools:
 *
 * - `app` connects as the application role, which owns nothing and cannot
 *   bypass row-level security. Every tenant-owned statement runs through
 *   `tenant(tenantId, fn)`, which sets the tenant for that one transaction
 *   with `set_config(..., true)` (the `SET LOCAL` form), never for the session.
 * - `background`: the same role, for bulk work that may wait (`tenantInBackground`).
 * - `system` connects as the schema owner. It runs migrations, the job queue and
 *   the few scans that must look across tenants to find work (due lots, due
 *   contests); those scans return tenant ids and the work itself is then done
 *   per tenant through `tenant()`.
 * - `replica`, when configured: the application role on a replica (`staleRead`).
 */
export type Tx = pg.PoolClient & {
  /** Set on the transaction a batch hands its work (platform/batch.ts): what the batch holds back and caches. */
  readonly batch?: TxBatch;
  /** Batch questions answered already for this transaction, by key, outside a batch (`withAnswers`, platform/batch.ts). */
  readonly answers?: ReadonlyMap<string, unknown>;
};

/** What a batch offers the functions that run in it (the class is platform/batch.ts's Batch). */
export interface TxBatch {
  state<T>(key: string, create: () => T): T;
  cached<T>(key: string, load: () => Promise<T>): Promise<T>;
  onEnd(finish: () => Promise<void>): void;
  onLastEnd(finish: () => Promise<void>): void;
  /** Registers held writes that every statement whose text `reads` matches must see (platform/batch.ts). */
  holdWrites(reads: RegExp, settle: () => Promise<void>): void;
  /** Runs the held writes that a statement of this text must see, before it is sent. */
  settleBefore(text: string): Promise<void>;
}

const CLIENT = Symbol('client');

/**
 * `tx` as a batch's transaction: the same connection (every call reaches the
 * client itself), with `batch` set, whose every statement is sent after the
 * held writes it must see (`settleBefore`). The connection's prepared
 * statements are found through it.
 */
export function withBatch(tx: Tx, batch: TxBatch): Tx {
  return viewOf(tx, { batch, answers: tx.answers });
}

/**
 * `tx` with batch questions answered already (platform/batch.ts, `askBatch`
 * reads them first): the same connection, in the batch `tx` is in, if any.
 * For a request whose transaction read the questions with an earlier
 * statement of its own (a completion, with its attempt's take).
 */
export function withAnswers(tx: Tx, answers: ReadonlyMap<string, unknown>): Tx {
  return viewOf(tx, { batch: tx.batch, answers });
}

function viewOf(tx: Tx, fields: { batch?: TxBatch; answers?: ReadonlyMap<string, unknown> }): Tx {
  const client = clientOf(tx);
  const { batch, answers } = fields;
  return new Proxy(client, {
    get(target, property) {
      if (property === 'batch') return batch;
      if (property === 'answers') return answers;
      if (property === CLIENT) return target;
      if (property === 'query' && batch) {
        return async (config: string | { text: string }, values?: unknown[]) => {
          await batch.settleBefore(typeof config === 'string' ? config : config.text);
          return (target.query as (config: unknown, values?: unknown[]) => Promise<unknown>)(config, values);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Tx;
}

function clientOf(tx: Tx): pg.PoolClient {
  return ((tx as unknown as Record<symbol, pg.PoolClient | undefined>)[CLIENT] ?? tx) as pg.PoolClient;
}

// BIGINT (int8) columns hold points and counts; they stay far below 2^53, so
// they are read as numbers instead of strings.
pg.types.setTypeParser(20, (value) => Number(value));
// NUMERIC is read as a number too (multipliers, weights, scores).
pg.types.setTypeParser(1700, (value) => Number(value));

interface ReadCaller {
  resolve(results: unknown[][]): void;
  reject(error: unknown): void;
  /** The caller's trace context, while tracing is on: a coalesced round trip is traced as its first caller's. */
  traced?: Context;
}

/**
 * Serialization failures and deadlocks, and foreign key violations: a transaction that failed with one
 * of these may simply run again. A foreign key violation here is a race in READ COMMITTED: the
 * transaction saw a row (a participant) that a concurrent one deleted and committed before this one
 * referenced it (an `ON CONFLICT DO NOTHING` that found the row takes no lock); run again, it sees
 * the row gone and creates it, or refuses the request as it should. One that is no race fails the same
 * way on every attempt and is thrown as before.
 */
export const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set(['40001', '40P01', '23503']);

export { PREPARED_PER_CONNECTION_MAX, planEachCall };


/** How many times a transaction runs at most when it keeps failing with a retryable SQLSTATE. */
export const TX_ATTEMPTS_MAX = 4;

/** The message that opens a transaction, or how to make it (or send it) for the connection it runs on. */
type Begin = string | ((client: Tx) => string | Promise<pg.QueryResult[]>);

export class Database {
  readonly app: pg.Pool;
  readonly system: pg.Pool;
  readonly background: pg.Pool;
  readonly replica: pg.Pool | null;
  /** Whether statements with parameters are sent as named (prepared) statements (DB_PREPARED_STATEMENTS). */
  private readonly preparedStatements: boolean;
  /** The request pool's connections that `open` opens and idleness never closes. */
  private readonly appMin: number;

  /**
   * `preparedStatements` (DB_PREPARED_STATEMENTS, on by default) sends
   * statements with parameters as named statements (see prepareStatements);
   * turn it off behind a connection pooler in transaction mode that does not
   * track prepared statements.
   */
  constructor(
    appUrl: string,
    systemUrl: string,
    poolSize: number,
    options: {
      preparedStatements?: boolean;
      replicaUrl?: string | null;
      idleSeconds?: number;
      /** Connections of the request pool (`app`) that `open` opens and idleness never closes (DB_POOL_MIN). */
      minConnections?: number;
      /** The background backends' nice value (platform/background-priority.ts; 0: left), and for each new one whether it took. */
      backgroundNice?: number;
      backgroundConnected?: (lowered: boolean) => void;
    } = {},
  ) {
    // pg's default closes a connection after 10 s unused: under a steady load that needs a few connections, the
    // rest of the pool closed and reopened all the time, and every burst paid for new backends (100/s activity
    // completions stalled for 2–3 s at p99 500 ms; docs/performance/activities.md).
    this.preparedStatements = options.preparedStatements ?? true;
    const idleTimeoutMillis = (options.idleSeconds ?? DEFAULT_POOL_IDLE_SECONDS) * 1000;
    this.appMin = Math.min(options.minConnections ?? 0, poolSize);
    this.app = new pg.Pool({ connectionString: appUrl, max: poolSize, min: this.appMin, idleTimeoutMillis, application_name: 'loyalty-app' });
    this.background = new pg.Pool({ connectionString: appUrl, max: poolSize, idleTimeoutMillis, application_name: 'loyalty-background' });
    this.system = new pg.Pool({ connectionString: systemUrl, max: Math.max(4, Math.ceil(poolSize / 2)), idleTimeoutMillis, application_name: 'loyalty-system' });
    this.replica = options.replicaUrl ? new pg.Pool({ connectionString: options.replicaUrl, max: poolSize, idleTimeoutMillis, application_name: 'loyalty-replica' }) : null;
    // Tracing is started before the database layer, or not at all: a process that traces nothing never wraps a statement.
    const traced = tracingOn();
    const nice = options.backgroundNice ?? 0;
    for (const pool of [this.app, this.background, this.system, ...(this.replica ? [this.replica] : [])]) {
      // An idle client that loses its connection must not crash the process.
      pool.on('error', () => undefined);
      pool.on('connect', (client) => {
        client.on('error', () => undefined);
        if (this.preparedStatements) {
          prepareStatements(client);
          namedClients.add(client);
        }
        if (traced) traceQueries(client, pool.options.application_name ?? 'loyalty');
        if (pool === this.background && nice > 0) {
          lowerBackendPriority(client, nice).then((lowered) => options.backgroundConnected?.(lowered), () => undefined);
        }
      });
    }
  }

  /**
   * Opens the request pool's `minConnections` (DB_POOL_MIN) before the service takes requests. A crowd that finds the
   * pool short opens connections while it waits, each a backend start, authentication and cold catalog caches on the
   * cores the crowd needs: a fresh service's first second of 1,000 spins/s had a p99 of 229–625 ms in three runs, and
   * 208–459 ms with the pool opened at start in four (docs/performance.md, "a fresh service's connections").
   */
  async open(): Promise<void> {
    const opened = await Promise.allSettled(Array.from({ length: this.appMin }, () => this.app.connect()));
    for (const result of opened) if (result.status === 'fulfilled') result.value.release();
    const failed = opened.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Runs `fn` in one transaction with the tenant set. Serialization failures
   * and deadlocks are retried a bounded number of times; every other error
   * rolls back and propagates.
   */
  async tenant<T>(tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(beginWithTenant(tenantId), fn);
  }

  /**
   * `tenant()` whose first statement travels with BEGIN and the tenant
   * setting, in the same round trip (one extended message, as
   * `runStatements` sends); `fn` receives that statement's rows. For
   * transactions that begin with a read, such as an existence check: one
   * round trip fewer.
   */
  async tenantStartingWith<T, R = Record<string, unknown>>(
    tenantId: string,
    text: string,
    values: readonly unknown[],
    fn: (tx: Tx, rows: R[]) => Promise<T>,
  ): Promise<T> {
    return this.tenantFramedBy<T, R>(tenantId, text, values, async (tx, rows) => ({ result: await fn(tx, rows), last: [] }));
  }

  /**
   * `tenantStartingWith` and `tenantEndingWith` at once: the first statement
   * travels with BEGIN and the tenant setting, the statements `fn` returns
   * (`last`) with COMMIT. For a transaction that begins with a read and ends
   * with writes whose answers it does not need (an ingestion lane's batch).
   */
  async tenantFramedBy<T, R = Record<string, unknown>>(
    tenantId: string,
    text: string,
    values: readonly unknown[],
    fn: (tx: Tx, rows: R[]) => Promise<{ result: T; last: readonly Statement[] }>,
    plans: Plans = 'auto',
  ): Promise<T> {
    return this.tenantOpenedWith<T>(tenantId, [{ text, values }], (tx, [rows]) => fn(tx, rows as R[]), plans);
  }

  /**
   * `tenantFramedBy` whose opening is several statements, sent with BEGIN and
   * the tenant setting in one message; `fn` receives each one's rows, in
   * order. For a transaction that knows its first writes before it reads (a
   * batch of completions of an activity this process knows: the read that
   * confirms the activity and the takes it allows travel together).
   */
  async tenantOpenedWith<T>(
    tenantId: string,
    statements: readonly Statement[],
    fn: (tx: Tx, rows: unknown[][]) => Promise<{ result: T; last: readonly Statement[] }>,
    plans: Plans = 'auto',
  ): Promise<T> {
    checkTenantId(tenantId);
    // BEGIN, the tenant and the first statements as one extended message, as `runStatements` sends its statements: each
    // prepared once per connection (inlined in the text, the accept statement was planned again on every call: 0.7 ms of
    // its 2.2 ms).
    const opening: Statement[] = [BEGIN, { text: plans === 'generic' ? SET_TENANT_GENERIC : SET_TENANT, values: [tenantId] }, ...statements];
    const begin = (tx: Tx) => {
      const client = clientOf(tx);
      return sendExtended(client, opening, namedClients.has(client));
    };
    const work = endingWithCommit<T>((tx, started) => fn(tx, asResults(started).slice(2).map((result) => result.rows)));
    return this.transaction(begin, work, this.app, true);
  }

  /**
   * `tenant()` whose last statements travel with its COMMIT, in one round
   * trip: `fn` returns its result and those statements (`last`), which are
   * sent as `runStatements` sends them, followed by COMMIT in the same
   * message. For transactions that end with writes whose answers they do not
   * need (a completion's record and events): one round trip fewer for each of
   * them and one for the COMMIT. A failing statement skips the rest and the
   * transaction rolls back; retried like `tenant()`.
   */
  async tenantEndingWith<T>(tenantId: string, fn: (tx: Tx) => Promise<{ result: T; last: readonly Statement[] }>): Promise<T> {
    return this.transaction(beginWithTenant(tenantId), endingWithCommit(fn), this.app, true);
  }

  /**
   * A write transaction in ONE round trip: the tenant setting and
   * `statements` as one extended-protocol message (`sendExtended`), which
   * PostgreSQL runs as one implicit transaction, committed at the message's
   * Sync (no BEGIN and COMMIT statements: two Bind/Execute pairs fewer per
   * call). Each statement sees what the ones before it wrote, with a snapshot
   * of its own. Returns each statement's rows. A failing statement skips the
   * rest and the transaction rolls back; retried like `tenant()`. For short,
   * hot writes whose statements decide among themselves what to write (the
   * direct grant: the change writes only when its idempotency claim was fresh).
   * The transaction plans with `plan_cache_mode = force_generic_plan`: its
   * statements are prepared once per connection and each runs on a few rows by
   * key, so a plan made once serves every call; a caller whose statements need
   * plans for their values (skewed data) should not use this method.
   */
  async tenantInOneTrip(tenantId: string, statements: readonly Statement[]): Promise<unknown[][]> {
    checkTenantId(tenantId);
    // The message is the whole transaction, committed at its Sync.
    const begin = (client: Tx) => committing(sendExtended(client, [{ text: SET_TENANT_GENERIC, values: [tenantId] }, ...statements], this.preparedStatements));
    return this.transaction(begin, async (_tx, started) => asResults(started).slice(1).map((result) => result.rows), this.app, true);
  }

  /**
   * One read-only statement with the tenant set, in ONE round trip: BEGIN,
   * the tenant setting, the statement and COMMIT travel as one simple-protocol
   * message, with the parameters inlined as escaped literals (converted to
   * text exactly as node-postgres converts parameters). `tenant()` costs three
   * round trips; hot read paths use this instead. The statement must not
   * contain `$n` inside its own string literals.
   *
   * Identical reads are coalesced: while one is on its way to the database,
   * callers asking for the same statement with the same values and tenant wait
   * for the NEXT round trip, which is sent when the current one returns and
   * answers all of them. A caller never joins a read that was sent before it
   * arrived, so every caller sees every commit that preceded its call (no
   * staleness is added), and a burst of identical reads costs one round trip
   * per database latency instead of one per caller. The rows are shared
   * between the callers of one round trip: treat them as read-only.
   */
  async tenantRead<R = Record<string, unknown>>(tenantId: string, text: string, values: readonly unknown[] = []): Promise<R[]> {
    const [rows] = await this.tenantReadAll(tenantId, [text], values);
    return rows as R[];
  }

  /**
   * `tenantRead` of several statements, in one transaction (one snapshot) and
   * one round trip; every statement takes the same `values`. Returns each
   * statement's rows, in order. Coalesced like `tenantRead`.
   */
  async tenantReadAll(tenantId: string, texts: readonly string[], values: readonly unknown[] = []): Promise<unknown[][]> {
    checkTenantId(tenantId);
    if (texts.length === 0) return [];
    const message = readMessage(tenantId, texts, values);
    return new Promise<unknown[][]>((resolve, reject) => {
      const caller: ReadCaller = { resolve, reject, traced: currentContext() };
      const line = this.readLines.get(message);
      if (line) {
        line.next.push(caller);
        return;
      }
      this.readLines.set(message, { next: [] });
      this.sendRead(message, [caller]);
    });
  }

  private readonly readLines = new Map<string, { next: ReadCaller[] }>();

  private sendRead(message: string, callers: ReadCaller[]): void {
    const settle = (outcome: { results: unknown[][] } | { error: unknown }) => {
      for (const caller of callers) {
        if ('results' in outcome) caller.resolve(outcome.results);
        else caller.reject(outcome.error);
      }
      const line = this.readLines.get(message)!;
      if (line.next.length === 0) {
        this.readLines.delete(message);
        return;
      }
      const waiting = line.next;
      line.next = [];
      this.sendRead(message, waiting);
    };
    // A later round trip is sent from the settling of an earlier one, in that caller's context: it is traced as its own first caller's.
    inContext(callers[0].traced, () => this.readOnce(message)).then((results) => settle({ results }), (error: unknown) => settle({ error }));
  }

  /** The rows of each statement between the tenant setting and COMMIT. */
  private async readOnce(message: string, pool: pg.Pool = this.app): Promise<unknown[][]> {
    const client = await pool.connect();
    try {
      const results = (await client.query(message)) as unknown as pg.QueryResult[];
      client.release();
      return results.slice(2, -1).map((result) => result.rows);
    } catch (error) {
      // A failed statement leaves the transaction open and aborted; close it before the connection is reused.
      await client.query('ROLLBACK').then(
        () => client.release(),
        () => client.release(true),
      );
      throw error;
    }
  }

  /**
   * A read that may lag the primary by the replica's replay delay: on the
   * streaming replica when DATABASE_REPLICA_URL is set, else on the primary.
   * For reads whose callers accept staleness (leaderboards, history,
   * analytics, exports); never for a read that must see the caller's own
   * write (a balance after a grant, a spin's outcome), nor for any write —
   * the transaction is READ ONLY, and a replica refuses writes anyway.
   */
  async staleRead<T>(tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(beginWithTenant(tenantId, 'READ ONLY'), fn, this.replica ?? this.app);
  }

  /** `tenantReadAll` on the replica when one is configured (see `staleRead`): one round trip, not coalesced. */
  async staleReadAll(tenantId: string, texts: readonly string[], values: readonly unknown[] = []): Promise<unknown[][]> {
    if (!this.replica) return this.tenantReadAll(tenantId, texts, values);
    checkTenantId(tenantId);
    if (texts.length === 0) return [];
    return this.readOnce(readMessage(tenantId, texts, values), this.replica);
  }

  /** `tenant()` on the background connections: bulk work that on one machine yields the CPU to the API's. */
  async tenantInBackground<T>(tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(beginWithTenant(tenantId), fn, this.background);
  }

  /** A transaction on the owner pool, for cross-tenant system work only. */
  async systemTx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction('BEGIN', fn, this.system);
  }

  /** `fn` runs between `begin` and COMMIT; with `commitsItself`, `fn`'s last message carries the COMMIT. */
  private transaction<T>(
    begin: Begin,
    fn: (tx: Tx, started: pg.QueryResult) => Promise<T>,
    pool: pg.Pool = this.app,
    commitsItself = false,
  ): Promise<T> {
    if (!tracingOn()) return this.attempts(begin, fn, pool, commitsItself);
    return traceTransaction(pool.options.application_name ?? 'loyalty', (attempted) => this.attempts(begin, fn, pool, commitsItself, attempted));
  }

  private async attempts<T>(
    begin: Begin,
    fn: (tx: Tx, started: pg.QueryResult) => Promise<T>,
    pool: pg.Pool,
    commitsItself: boolean,
    attempted?: (attempt: number) => void,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      attempted?.(attempt);
      const client = await pool.connect();
      let released = false;
      try {
        const opening = typeof begin === 'string' ? begin : begin(client);
        const started = await (typeof opening === 'string' ? client.query(opening) : opening);
        const result = await fn(client, started as pg.QueryResult);
        if (!commitsItself) await committing(client.query('COMMIT'));
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          // The connection is broken; drop it instead of returning it to the pool.
          client.release(true);
          released = true;
        }
        const code = (error as { code?: string }).code;
        // A stale prepared plan has made the connection prepare afresh; the transaction runs again.
        if (((code && RETRYABLE_SQLSTATES.has(code)) || isStalePlan(error)) && attempt < TX_ATTEMPTS_MAX) continue;
        throw error;
      } finally {
        if (!released) client.release();
      }
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.app.end(), this.background.end(), this.system.end(), ...(this.replica ? [this.replica.end()] : [])]);
  }
}
