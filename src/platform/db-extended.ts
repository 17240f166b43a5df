import { createRequire } from 'node:module';
import type pg from 'pg';
import { serialize } from 'pg-protocol';

/**
 * Several statements sent with the extended protocol in ONE write and ONE
 * round trip: for each statement Parse (only the first time on a
 * connection, under a name), Bind, Describe (until its columns are known)
 * and Execute, then a single Sync, serialised into one buffer.
 * PostgreSQL runs them in order, each with a snapshot of its own; the first
 * error skips the rest up to the Sync. Against the same statements sent as
 * one simple-protocol text (`EXECUTE name('literal', …)` for each), the
 * server neither parses an EXECUTE nor copies each result into a tuplestore,
 * and the client builds no text: a direct grant's message costs the
 * database a fifth less (docs/performance.md, "One grant path").
 *
 * A `pg` submittable (`client.query(submittable)`): the client hands it the
 * protocol's answers one by one while it is the connection's active query.
 */

const require = createRequire(import.meta.url);
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue(value: unknown): unknown };
const Result = require('pg/lib/result.js') as new () => pg.QueryResult & {
  addFields(fields: unknown[]): void;
  /** What addFields derives from the fields (pg/lib/result.js): a parser per column and the empty row parseRow copies. */
  _parsers: unknown[];
  _prebuiltEmptyResultObject: Record<string, unknown>;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
  addCommandComplete(message: unknown): void;
};

/**
 * Texts that every connection sends unnamed, so PostgreSQL plans them on each call with the values given and the
 * tables as they are, never from a cached plan (`planEachCall`).
 */
const plannedEachCall = new Set<string>();

/**
 * Marks a statement's text to be planned on each call, and returns it. For a statement over a list of keys on a
 * table that grows in bursts (a batch's events, deliveries or keys): a connection's cached plan is made with the
 * table's size at the time and kept until the table's next ANALYZE (autovacuum's, up to a minute later by default).
 * Made while the table was small, it scanned every row of the tenant for each batch once the table had grown (up to
 * 500 ms for 100 events at 100,000 in `npm run bench -- pipeline`). Planning once per batch costs a fraction of a
 * millisecond. For a constant text: the set keeps every text it is given.
 */
export function planEachCall(text: string): string {
  plannedEachCall.add(text);
  return text;
}

/** Whether a text is planned on each call (`planEachCall`): sent unnamed, never prepared. */
export function isPlannedEachCall(text: string): boolean {
  return plannedEachCall.has(text);
}

/** A statement and its parameter values. */
interface Sent {
  text: string;
  values: readonly unknown[];
}

/** What `pg`'s connection offers a submittable (pg/lib/connection.js): its socket. */
interface Connection {
  stream: { writable: boolean; write(buffer: Buffer): boolean };
}

/** Describe of the unnamed portal, Execute of all its rows, and Sync: the same bytes every time. */
const DESCRIBE = serialize.describe({ type: 'P', name: '' });
const EXECUTE = serialize.execute({ portal: '', rows: 0 });
const SYNC = serialize.sync();

/**
 * The columns a named statement answers, as `Result.addFields` derived them
 * from its RowDescription; `none` for a statement that answers no rows.
 */
type Shape = { fields: pg.FieldDef[]; parsers: unknown[]; empty: Record<string, unknown> } | 'none';

/** The names under which a connection holds the statements it parsed for extended messages. */
interface Names {
  byText: Map<string, string>;
  /** Names used so far; never reused, since a name forgotten here may still exist on the server. */
  created: number;
  /**
   * The shape of each named statement's rows, learnt from its first
   * Describe. A named statement's columns do not change (PostgreSQL refuses
   * to run it once they would: `isStalePlan`, after which every name is
   * forgotten), so later messages send no Describe for it: the server builds
   * and sends no RowDescription, and this process neither parses one nor
   * derives the column parsers again.
   */
  shapes: Map<string, Shape>;
}

const namesOf = new WeakMap<pg.ClientBase, Names>();

/** Named statements kept per connection at most (for each way of preparing them); statements beyond are sent unnamed (parsed and planned each time). */
export const PREPARED_PER_CONNECTION_MAX = 200;

class ExtendedMessage {
  private readonly results: pg.QueryResult[] = [];
  private current: InstanceType<typeof Result> | null = null;
  /** Each statement's name ('' when sent unnamed) and whether it was described, by position. */
  private readonly sentNames: string[] = [];
  private readonly described: boolean[] = [];
  private error: unknown = null;
  private settled = false;

  readonly traced = true;

  constructor(
    /** The message's statements, in order (read by tests that watch what a connection sends). */
    readonly statements: readonly Sent[],
    private readonly names: Names | null,
    /** Texts given a name by this message: forgotten again when it fails, since their Parse may not have run. */
    private readonly fresh: string[],
    /** Called once with the outcome; a tracer may wrap it. */
    public callback: (error: unknown, results: pg.QueryResult[]) => void,
  ) {}

  /** The statements' texts, for a trace (`traceQueries` makes one span of the message); built only when read. */
  get text(): string {
    return this.statements.map((statement) => statement.text).join(';\n');
  }

  /** The whole message as one buffer and one write to the socket (not a write per protocol message, as `pg` makes them). */
  submit(connection: Connection): null {
    const chunks: Buffer[] = [];
    for (const { text, values } of this.statements) {
      let name = this.names?.byText.get(text);
      if (name === undefined) {
        if (this.names && this.names.created < PREPARED_PER_CONNECTION_MAX && !isPlannedEachCall(text)) {
          name = `x${this.names.created++}`;
          this.names.byText.set(text, name);
          this.fresh.push(text);
        } else {
          name = '';
        }
        chunks.push(serialize.parse({ text: name === '' ? text : compactSql(text), name, types: [] }));
      }
      chunks.push(serialize.bind({ statement: name, values: values as unknown[], valueMapper: prepareValue }));
      const describe = name === '' || !this.names?.shapes.has(name);
      if (describe) chunks.push(DESCRIBE);
      chunks.push(EXECUTE);
      this.sentNames.push(name);
      this.described.push(describe);
    }
    chunks.push(SYNC);
    if (connection.stream.writable) connection.stream.write(Buffer.concat(chunks));
    return null;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.current = new Result();
    this.current.addFields(message.fields);
    const name = this.sentNames[this.results.length];
    if (name && this.names) {
      this.names.shapes.set(name, { fields: this.current.fields, parsers: this.current._parsers, empty: this.current._prebuiltEmptyResultObject });
    }
  }

  /** The result of the statement now answering, from its known shape when it was sent without a Describe. */
  private resultOfUndescribed(): InstanceType<typeof Result> | null {
    const shape = this.names?.shapes.get(this.sentNames[this.results.length]);
    if (!shape || shape === 'none') return null;
    const result = new Result();
    result.fields = shape.fields;
    result._parsers = shape.parsers;
    result._prebuiltEmptyResultObject = shape.empty;
    return result;
  }

  handleDataRow(message: { fields: unknown[] }): void {
    if (!this.current && !this.described[this.results.length]) this.current = this.resultOfUndescribed();
    if (this.error || !this.current) return;
    try {
      this.current.addRow(this.current.parseRow(message.fields));
    } catch (error) {
      this.error = error;
    }
  }

  handleCommandComplete(message: unknown): void {
    const index = this.results.length;
    const name = this.sentNames[index];
    // Described, and no RowDescription came (NoData): a statement without rows.
    if (!this.current && this.described[index] && name && this.names) this.names.shapes.set(name, 'none');
    const result = this.current ?? (this.described[index] ? null : this.resultOfUndescribed()) ?? new Result();
    result.addCommandComplete(message);
    this.results.push(result);
    this.current = null;
  }

  handleEmptyQuery(): void {
    this.results.push(new Result());
  }

  /** The client lets go of its active query on an error (and queues the next one until ReadyForQuery): settle now. */
  handleError(error: unknown): void {
    this.error ??= error;
    this.settle();
  }

  handleReadyForQuery(): void {
    this.settle();
  }

  handlePortalSuspended(): void {
    this.error ??= new Error('an extended message does not suspend portals');
  }

  handleCopyInResponse(): void {
    this.error ??= new Error('an extended message does not copy');
  }

  handleCopyData(): void {}

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.error && this.names) for (const text of this.fresh) this.names.byText.delete(text);
    this.callback(this.error, this.results);
  }
}

/**
 * `text` without its comments and with each run of white space outside
 * literals and quoted names made one space. PostgreSQL copies a statement's
 * text for every Bind and Execute and reports it as the backend's activity,
 * and a text over 8 kB takes a malloc of its own each time: the grant
 * statement with its followers is 8.7 kB with its comments and line breaks,
 * 7.1 kB without. Done once per connection and statement, when it is parsed
 * under a name.
 */
export function compactSql(text: string): string {
  let out = '';
  let i = 0;
  let space = false;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '-' && text[i + 1] === '-') {
      while (i < n && text[i] !== '\n') i++;
      space = true;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      let depth = 0;
      do {
        if (text.startsWith('/*', i)) (depth++, (i += 2));
        else if (text.startsWith('*/', i)) (depth--, (i += 2));
        else i++;
      } while (i < n && depth > 0);
      space = true;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f') {
      space = true;
      i++;
      continue;
    }
    if (space && out !== '') out += ' ';
    space = false;
    let end = i + 1;
    if (c === "'" || c === '"') {
      // A doubled quote is an escaped one; an E'' string may escape with a backslash.
      const escapes = c === "'" && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      while (end < n) {
        if (escapes && text[end] === '\\') end += 2;
        else if (text[end] === c && text[end + 1] === c) end += 2;
        else if (text[end] === c) break;
        else end++;
      }
      end++;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_][A-Za-z_0-9]*\$|^\$\$/.exec(text.slice(i, i + 64))?.[0];
      if (tag && !/[\w]/.test(text[i - 1] ?? '')) {
        const close = text.indexOf(tag, i + tag.length);
        end = close < 0 ? n : close + tag.length;
      }
    }
    out += text.slice(i, end);
    i = end;
  }
  return out;
}

/**
 * Sends `statements` as one extended-protocol message on `client` and
 * returns each statement's result, in order. With `named`, a connection
 * parses each text once and binds it by name afterwards (forgetting every
 * name after a stale plan); without, each is parsed unnamed on every call
 * (behind a pooler that does not track prepared statements).
 */
export function sendExtended(client: pg.ClientBase, statements: readonly Sent[], named: boolean): Promise<pg.QueryResult[]> {
  let names: Names | null = null;
  if (named) {
    names = namesOf.get(client) ?? { byText: new Map(), created: 0, shapes: new Map() };
    namesOf.set(client, names);
  }
  return new Promise((resolve, reject) => {
    const message = new ExtendedMessage(statements, names, [], (error, results) => {
      if (error) {
        if (names && isStalePlan(error)) {
          names.byText = new Map();
          names.shapes = new Map();
        }
        reject(error);
      } else {
        resolve(results);
      }
    });
    void (client.query as unknown as (submittable: unknown) => unknown)(message);
  });
}

/**
 * A prepared statement whose result columns changed under it (a migration
 * added or dropped a column of a `SELECT *` table while this process ran):
 * PostgreSQL refuses it once; prepared again, it works.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

/**
 * Makes a connection send every statement that has parameters as a named
 * (prepared) statement, the first time under a new name and afterwards by
 * that name: PostgreSQL then parses it once per connection and, after a few
 * runs, plans it once (a cached generic plan) instead of on every call.
 * Planning was 40% of the database's CPU on the event-processing path
 * (docs/performance/ingestion.md). At most PREPARED_PER_CONNECTION_MAX named
 * statements per connection; after a stale plan the connection forgets its
 * names and prepares afresh under new ones (within the same bound).
 * Statements without parameters, texts planned on each call (`planEachCall`)
 * and calls that pass a query object go through unchanged.
 */
export function prepareStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let names = new Map<string, string>();
  // Named statements created on this connection; it never decreases, since PostgreSQL keeps a
  // statement until the connection closes even after its name is forgotten here.
  let created = 0;
  (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values, callback] = args;
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined || isPlannedEachCall(text)) return query(...args);
    let name = names.get(text);
    if (!name) {
      if (created >= PREPARED_PER_CONNECTION_MAX) return query(text, values);
      name = `p${created++}`;
      names.set(text, name);
    }
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      if (isStalePlan(error)) names = new Map();
      throw error;
    });
  };
}
