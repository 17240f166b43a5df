import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { clock } from '../../platform/clock.js';
import { LEADERBOARD_READ_CACHE_TTL_MAX_MS } from '../../config.js';

/**
 * The public leaderboard's answers, kept in memory for a moment (issue 37: a
 * contest's last hour has everyone refreshing the same board). A ranking
 * changes only when it is rebuilt (every `refresh_seconds`, at least 1), so
 * the same question asked again within a second gets the same answer: the
 * exact bytes the route sent the first time, serialized once.
 *
 * - Keyed by everything the answer depends on: the tenant, the board's code,
 *   the engagement named, the caller's participant (its `me`, `around_me`
 *   and `is_me`; null for an anonymous or key caller), limit, around and
 *   period_start; and the board's version in this process.
 * - A rebuild, rename, rescope or archive done in this process bumps the
 *   board's version after it commits: the next read computes afresh. A
 *   rebuild done by another process (SERVICE_ROLE=worker) shows up within
 *   TTL_MS at most, which never exceeds the shortest refresh interval a board
 *   can have (1 s): so an answer is never older than today's by more than one
 *   refresh interval.
 * - An entry's age counts in real time and in service-clock time, whichever
 *   is greater (tests move the clock; a frozen one ages nothing, the real one
 *   does). Younger than 0.8 × TTL_MS it is answered as is; older, the first
 *   read starts its recomputation and the reads meanwhile still get the entry
 *   (so that no crowd waits on a recomputation) until it is TTL_MS old; past
 *   that, reads wait for the recomputation.
 * - Identical reads in flight share one computation; a failure is not kept.
 * - Bounded by bytes (LRU): entries beyond READ_CACHE_MAX_BYTES push out the
 *   least recently used.
 * - An answer is also kept gzip-encoded, made by the first read that accepts
 *   it (`Answer.gzipped`): a crowd's browsers all do, and a top page of 100
 *   ranks is about 12 KB of JSON and 1.6 KB in gzip, compressed once a
 *   second, not once per read.
 */
export const READ_CACHE_TTL_MS = LEADERBOARD_READ_CACHE_TTL_MAX_MS;
export const READ_CACHE_MAX_BYTES = 16 * 1024 * 1024;
/** The share of the TTL an entry is answered without a recomputation; the rest of it, while one runs. */
const FRESH_SHARE = 0.8;
/** Per entry beyond the strings: the entry object and its slot in the Map. */
const ENTRY_OVERHEAD_BYTES = 200;
/** What an answer's gzip may add, as a share of its JSON's length (counted when it is kept; JSON compresses to a fifth or less). */
const GZIP_SHARE = 0.5;

/** An answer as kept: its JSON, and the same gzip-encoded, made once by the first read that accepts it. */
export class Answer {
  private compressed: Buffer | undefined;
  constructor(readonly body: string) {}

  gzipped(): Buffer {
    return (this.compressed ??= gzipSync(this.body));
  }
}

interface Entry {
  answer: Answer;
  storedAt: number;
  storedAtClock: number;
  /** The share of the TTL it is answered as is; below `Shares.fresh` for an answer made from a cached part (see `recompute`). */
  fresh?: number;
}

export interface ReadKey {
  tenantId: string;
  code: string;
  engagementId: string | undefined;
  participantId: string | null;
  limit: number;
  around: number;
  periodStart: string | undefined;
  /** 'standing': a board's shared part (JSON), from which a participant's answer is made; absent for an answer. */
  part?: 'standing';
}

/**
 * Least recently used first out, by bytes: a Map keeps its keys in insertion
 * order, and a hit moves its key to the end.
 */
class ByteBoundedLru {
  private readonly entries = new Map<string, Entry & { bytes: number }>();
  private bytes = 0;
  constructor(readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  get(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: Entry): void {
    // Strings count twice their length: a name outside Latin-1 makes V8 store two bytes per character.
    const bytes = Math.ceil((2 + GZIP_SHARE) * entry.answer.body.length) + 2 * key.length + ENTRY_OVERHEAD_BYTES;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { ...entry, bytes });
    this.bytes += bytes;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.bytes;
    }
  }
}

function newCache(maxBytes: number) {
  return new ByteBoundedLru(maxBytes);
}

let ttlMs = READ_CACHE_TTL_MS;
let answers = newCache(READ_CACHE_MAX_BYTES);
const inFlight = new Map<string, Promise<Kept>>();
/** Bumped by a change made in this process; a board never changed here reads version 0. */
const versions = new Map<string, number>();

const boardOf = (tenantId: string, code: string) => `${tenantId}\u0000${code}`;

/** Forgets every answer of the board in this process (call once the change committed). */
export function boardChanged(tenantId: string, code: string): void {
  const board = boardOf(tenantId, code);
  versions.set(board, (versions.get(board) ?? 0) + 1);
}

/** The entry's age in ms (Infinity when the service clock went back). */
function ageOf(entry: Entry): number {
  const clockAge = clock.nowMs() - entry.storedAtClock;
  return clockAge < 0 ? Infinity : Math.max(performance.now() - entry.storedAt, clockAge);
}

/** When a cached value's data was read: its age counts from here. */
export interface Stamp {
  storedAt: number;
  storedAtClock: number;
}

/** A computed value, with the stamp of older cached data it was made from (its age then counts from that). */
export type Computed = string | { body: string; since: Stamp };

/** A kept answer and the stamp it ages from. */
export interface Kept {
  answer: Answer;
  since: Stamp;
}

/** The shares of the TTL an entry is answered as is (`fresh`), and answered while one recomputation runs (up to `served`). */
export interface Shares {
  fresh: number;
  served: number;
}

const ANSWER_SHARES: Shares = { fresh: FRESH_SHARE, served: 1 };

/**
 * The answer for the key: from memory when fresh, else computed (once for
 * every identical read in flight) and kept. `shares` says how long an entry
 * is answered as is and how long while it is recomputed; past that, the call
 * waits for the recomputation. A part that answers are made from uses smaller
 * shares (they age from the part's read), so that answers made from it at
 * different moments do not all fall due at once.
 */
export async function cachedEntry(key: ReadKey, compute: () => Promise<Computed>, shares: Shares = ANSWER_SHARES): Promise<Kept> {
  if (ttlMs <= 0) return settled(await compute(), now());
  const board = boardOf(key.tenantId, key.code);
  const id = JSON.stringify([board, versions.get(board) ?? 0, key.engagementId ?? null, key.participantId, key.limit, key.around, key.periodStart ?? null, key.part ?? 'answer']);
  const entry = answers.get(id);
  const age = entry ? ageOf(entry) : Infinity;
  const kept = entry && { answer: entry.answer, since: { storedAt: entry.storedAt, storedAtClock: entry.storedAtClock } };
  if (kept && age < ttlMs * (entry.fresh ?? shares.fresh)) return kept;
  const pending = inFlight.get(id) ?? recompute(id, compute, shares);
  return kept && age < ttlMs * shares.served ? kept : pending;
}

/** `cachedEntry`'s answer. */
export async function cachedAnswer(key: ReadKey, compute: () => Promise<Computed>): Promise<Answer> {
  return (await cachedEntry(key, compute)).answer;
}

function now(): Stamp {
  return { storedAt: performance.now(), storedAtClock: clock.nowMs() };
}

/** The computed value with the stamp it ages from: the older of `started` and the stamp of the data it was made from. */
function settled(computed: Computed, started: Stamp): Kept {
  if (typeof computed === 'string') return { answer: new Answer(computed), since: started };
  return { answer: new Answer(computed.body), since: { storedAt: Math.min(started.storedAt, computed.since.storedAt), storedAtClock: Math.min(started.storedAtClock, computed.since.storedAtClock) } };
}

/**
 * Computes and keeps an entry. An answer made from a cached part ages from the
 * part's read, like every other answer made from it meanwhile: its fresh share
 * is drawn between half and all of the usual one, so that those answers are
 * not all recomputed at the same moment (a crowd's participants, each with
 * their own answer, would otherwise all fall due at once).
 */
function recompute(id: string, compute: () => Promise<Computed>, shares: Shares): Promise<Kept> {
  const computing = (async () => {
    const started = now();
    try {
      const computed = await compute();
      const value = settled(computed, started);
      const fresh = typeof computed === 'string' ? undefined : shares.fresh * (0.5 + 0.5 * Math.random());
      answers.set(id, { answer: value.answer, ...value.since, fresh });
      return value;
    } finally {
      inFlight.delete(id);
    }
  })();
  inFlight.set(id, computing);
  // A recomputation nobody waits for (its entry still served) must not reject unhandled.
  computing.catch(() => undefined);
  return computing;
}

/** Tests and benchmarks: the cache's size, and a different bound or TTL (0 turns the cache off); empties it. */
export const readCacheControl = {
  stats: () => ({ entries: answers.size, bytes: answers.usedBytes, maxBytes: answers.maxBytes }),
  configure(options: { maxBytes?: number; ttlMs?: number }): void {
    answers = newCache(options.maxBytes ?? READ_CACHE_MAX_BYTES);
    ttlMs = options.ttlMs ?? READ_CACHE_TTL_MS;
  },
};

/** The service's setting (`Config.leaderboardReadCacheTtlMs`, LEADERBOARD_READ_CACHE_TTL_MS), applied when the module's routes are registered. */
export function useReadCacheTtl(ms: number): void {
  ttlMs = ms;
}
