import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { Database } from '../src/platform/db.js';

/**
 * Faults of the database's connection, made on purpose: the messages the
 * application pool's connections send, seen and answered by a test.
 */

/** What a message sent to the database looks like to a test: its first argument, and how to send it on. */
export type Sending = (first: string | { text?: string; statements?: unknown[] }, send: () => unknown, client: pg.PoolClient) => unknown;

/** Every message the application pool's connections send goes through `sending` until the test ends. */
export function interceptQueries(t: TestContext, db: Database, sending: Sending): void {
  const pool = db.app as pg.Pool & { connect: () => Promise<pg.PoolClient> };
  const connect = pool.connect.bind(pool);
  const wrapped = new WeakSet<object>();
  let intercepting = true;
  pool.connect = async () => {
    const client = await connect();
    if (!wrapped.has(client)) {
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const send = () => query(...args);
        return intercepting ? sending(args[0] as Parameters<Sending>[0], send, client) : send();
      };
    }
    return client;
  };
  t.after(() => {
    intercepting = false;
    pool.connect = connect;
  });
}

/** Which committing message `failNextCommit` fails. */
export interface CommitFault {
  /** How the message fails: `lost`, after the database ran it (the connection dropped before its answer came back); `refused`, by the database's own error before it ran (the transaction ends without committing). */
  how: 'lost' | 'refused';
  /** Only the COMMIT of a transaction that sent a statement matching this (the change under test), on its connection. */
  after?: RegExp;
  /** What a committing message looks like: by default the text `COMMIT` or an extended message with a COMMIT statement; `Database.tenantInOneTrip`'s message commits without one. */
  commits?: RegExp;
}

/** The next committing message (`CommitFault`) fails, once. */
export function failNextCommit(t: TestContext, db: Database, { how, after = /./, commits = /\bCOMMIT\b/ }: CommitFault): void {
  let armed = true;
  // The connections whose transaction sent the change the fault waits for.
  const changed = new WeakSet<object>();
  interceptQueries(t, db, (first, send, client) => {
    const text = typeof first === 'string' ? first : String(first.text);
    if (!armed) return send();
    if (after.test(text)) changed.add(client);
    const reading = typeof first === 'string' && /^BEGIN READ ONLY/.test(text);
    if (reading || !commits.test(text) || !changed.has(client)) return send();
    armed = false;
    const lost = new Error('Connection terminated unexpectedly');
    const refused = new pg.DatabaseError('could not serialize the commit (a test)', 0, 'error');
    if (typeof first === 'string') return how === 'refused' ? Promise.reject(refused) : (send() as Promise<unknown>).then(() => Promise.reject(lost));
    // An extended message (`sendExtended`): its answer comes through its callback.
    const message = first as { callback: (error: unknown, results: unknown) => void };
    assert.equal(typeof message.callback, 'function', 'the message is an extended one');
    const answer = message.callback.bind(message);
    if (how === 'refused') {
      answer(refused, []);
      return message;
    }
    message.callback = () => answer(lost, []);
    return send();
  });
}
