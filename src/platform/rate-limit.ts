import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import { tenantRequestsPerMinute, type Plan } from './plans.js';
import { sha256Hex } from './ids.js';

/**
 * The five request-rate scopes of the spec (Limits, Request rate):
 *
 * | scope                     | limit                         | applies to                           |
 * |---------------------------|-------------------------------|--------------------------------------|
 * | per IP                    | 100 / 60 s                    | unauthenticated and session callers  |
 * | per API key               | 1,000 / 60 s, per-key override| key and admin-token callers          |
 * | per tenant, public routes | the plan's requests / minute  | session and public callers of a tenant|
 * | per tenant, aggregate     | the plan's requests / minute  | every keyed caller of the tenant     |
 * | ingestion burst           | 100 / 1 s per tenant          | ingestion routes                     |
 *
 * Routes in the `listing` group (bulk reads such as the participant listing,
 * "rate-limited; not for bulk loads") also count against a tighter per-caller
 * limit, RATE_LIMIT_LISTING_PER_MINUTE (default 60 / 60 s). The operations
 * routes (`config.rateLimit: 'none'`) are not counted at all.
 *
 * Counters live in memory, or in Redis when REDIS_URL is set so that several
 * API processes share them (with an in-memory insurance limiter if Redis
 * fails). The tightest scope decides the X-RateLimit-* headers.
 *
 * Failed sign-ins (the console's and the admin login token's) are counted on
 * top, per account and per address, with a lockout that doubles: see
 * `signInAttempt` below.
 */
export type RateLimitGroup = 'default' | 'ingest' | 'listing';

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAtSeconds: number;
  retryAfterSeconds: number;
  scope: string;
}

const WINDOW_SECONDS = 60;
const REDIS_CONNECT_WAIT_MS = 5_000;

/**
 * Failed sign-ins a scope may make before it is locked out: an account (the
 * email signed in with) is the target of a guesser, an address may be an
 * office behind one NAT, so it gets more.
 */
export const SIGN_IN_FAILURES_FREE = { account: 5, address: 100 } as const;
export type SignInScope = keyof typeof SIGN_IN_FAILURES_FREE;
/** The lockout after the last free failure; each further failure doubles it, up to the maximum. */
export const SIGN_IN_LOCKOUT_FIRST_SECONDS = 60;
export const SIGN_IN_LOCKOUT_MAX_SECONDS = 15 * 60;
/** How long failures are remembered (a fixed window from the first one; a success clears an account's at once). */
const SIGN_IN_FAILURES_KEPT_SECONDS = 24 * 3600;
/** The counting limiter never refuses (failures are added with `penalty`); its size only has to exceed any count. */
const SIGN_IN_FAILURES_COUNTED_MAX = 1_000_000_000;

/** The lockout that follows a scope's `failures`-th failure (none before the last free one). */
export function signInLockoutSeconds(scope: SignInScope, failures: number): number {
  const beyond = failures - SIGN_IN_FAILURES_FREE[scope];
  if (beyond < 0) return 0;
  return Math.min(SIGN_IN_LOCKOUT_FIRST_SECONDS * 2 ** Math.min(beyond, 16), SIGN_IN_LOCKOUT_MAX_SECONDS);
}

/** A sign-in attempt let through: tell how it ended. */
export interface SignInAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
}

/** A sign-in attempt refused before the password was looked at. */
export interface SignInRefusal {
  scope: SignInScope;
  retryAfterSeconds: number;
}

/**
 * What the limits read of a caller: the fields of platform/auth.ts's
 * AuthContext that they need, named here so that this file depends on no
 * credential code (auth.ts → console-auth.ts → here would be a circle).
 */
export interface LimitedCaller {
  kind: 'key' | 'jwt' | 'session' | 'console';
  tenantId: string;
  actorId: string;
  plan: Plan;
  tenantRequestsPerMinute: number | null;
  keyRequestsPerMinute: number | null;
}

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly redis: Redis | null;

  constructor(private readonly config: Config) {
    this.redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }) : null;
    this.redis?.on('error', () => undefined);
  }

  /**
   * Waits (bounded) until Redis answers, so that a starting process counts in
   * the shared store from its first request instead of in its own memory.
   * When Redis stays away, the in-memory insurance limiter serves meanwhile.
   */
  async ready(timeoutMs = REDIS_CONNECT_WAIT_MS): Promise<boolean> {
    const redis = this.redis;
    if (!redis) return true;
    if (redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const done = (connected: boolean) => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        resolve(connected);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      redis.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    // quit() waits for the server's answer; a server that is gone would hold the process, so it is bounded.
    await Promise.race([this.redis.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, REDIS_CONNECT_WAIT_MS).unref())]);
    this.redis.disconnect();
  }

  /** One limiter per (scope, size, window); rate-limiter-flexible fixes the size per limiter. */
  private limiter(scope: string, points: number, durationSeconds: number): RateLimiterAbstract {
    const name = `${scope}:${points}:${durationSeconds}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const keyPrefix = `rl:${name}`;
      limiter = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            keyPrefix,
            points,
            duration: durationSeconds,
            insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds }),
          })
        : new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds });
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  private async consume(scope: string, key: string, points: number, durationSeconds: number): Promise<Decision> {
    const limiter = this.limiter(scope, points, durationSeconds);
    let result: RateLimiterRes;
    let allowed = true;
    try {
      result = await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      result = rejection;
      allowed = false;
    }
    const nowMs = Date.now();
    return {
      allowed,
      limit: points,
      remaining: Math.max(0, result.remainingPoints),
      resetAtSeconds: Math.ceil((nowMs + result.msBeforeNext) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
      scope,
    };
  }

  /**
   * Counts one request against every scope that applies and returns the
   * binding decision. `ip` null skips the per-IP scope (a session route counts
   * the address before it reads the body, and the session after).
   */
  async check(ip: string | null, auth: LimitedCaller | null, group: RateLimitGroup): Promise<Decision> {
    const checks: Promise<Decision>[] = [];
    const keyed = auth !== null && (auth.kind === 'key' || auth.kind === 'jwt' || auth.kind === 'console');
    if (!keyed && ip !== null) checks.push(this.consume('ip', ip, this.config.rateLimits.ipPerMinute, WINDOW_SECONDS));
    if (auth) {
      const tenantLimit = tenantRequestsPerMinute(auth.plan, auth.tenantRequestsPerMinute);
      if (keyed) {
        const keyLimit = auth.keyRequestsPerMinute ?? this.config.rateLimits.keyPerMinute;
        checks.push(this.consume('key', auth.actorId, keyLimit, WINDOW_SECONDS));
        checks.push(this.consume('tenant', auth.tenantId, tenantLimit, WINDOW_SECONDS));
      } else {
        checks.push(this.consume('tenant-public', auth.tenantId, tenantLimit, WINDOW_SECONDS));
      }
      if (group === 'listing') checks.push(this.consume('listing', keyed ? auth.actorId : (ip ?? auth.actorId), this.config.rateLimits.listingPerMinute, WINDOW_SECONDS));
      if (group === 'ingest') checks.push(this.consume('ingest-burst', auth.tenantId, this.config.rateLimits.ingestBurstPerSecond, 1));
    }
    if (checks.length === 0) throw new Error('a rate-limit check needs an address or a credential');
    return bindingDecision(await Promise.all(checks));
  }

  /**
   * Admits one sign-in attempt with an email from an address, or refuses it
   * while the account or the address is locked out. Review finding 9 (issue
   * 32): the shared per-address request limit was the only brake on password
   * guessing, and a forged X-Forwarded-For reset it.
   *
   * Every attempt counts as a failure until it is known to have succeeded, so
   * attempts sent all at once are counted before any of them is checked. A
   * scope within its free failures admits the attempt; beyond them, it admits
   * one attempt per lockout window (an atomic `consume` of a one-point
   * limiter whose window is the lockout), and an attempt refused there is
   * taken off the count again. A failure at or beyond the last free one
   * starts a lockout (`block`) that doubles with each failure, up to
   * SIGN_IN_LOCKOUT_MAX_SECONDS. A success clears the account's failures and
   * lockout; an address keeps its failures (a guesser holding one valid
   * account must not reset the address's count with it).
   *
   * Accounts are keyed by the SHA-256 of the lower-cased email, known or not
   * (emails are unique across tenants, so the email names the tenant's
   * account; an unknown one is counted the same, so a lockout tells nothing
   * about existence, and no address of a person lands in Redis).
   */
  async signInAttempt(email: string, address: string | null): Promise<SignInAttempt | SignInRefusal> {
    const scopes: Array<{ scope: SignInScope; key: string }> = [{ scope: 'account', key: sha256Hex(email.trim().toLowerCase()) }];
    if (address) scopes.push({ scope: 'address', key: address });
    const counted = await Promise.all(scopes.map(({ scope, key }) => this.signInFailures(scope).penalty(key, 1)));
    const failures = counted.map((result) => result.consumedPoints);
    const refusals: SignInRefusal[] = [];
    await Promise.all(
      scopes.map(async ({ scope, key }, i) => {
        if (failures[i] <= SIGN_IN_FAILURES_FREE[scope]) return;
        try {
          await this.signInLockout(scope).consume(key, 1, { customDuration: signInLockoutSeconds(scope, failures[i] - 1) });
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          refusals.push({ scope, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) });
        }
      }),
    );
    if (refusals.length > 0) {
      await Promise.all(scopes.map(({ scope, key }) => this.signInFailures(scope).reward(key, 1)));
      return refusals.reduce((longest, refusal) => (refusal.retryAfterSeconds > longest.retryAfterSeconds ? refusal : longest));
    }
    return {
      failed: async () => {
        await Promise.all(
          scopes.map(async ({ scope, key }, i) => {
            const lockoutSeconds = signInLockoutSeconds(scope, failures[i]);
            if (lockoutSeconds > 0) await this.signInLockout(scope).block(key, lockoutSeconds);
          }),
        );
      },
      succeeded: async () => {
        await Promise.all(
          scopes.map(async ({ scope, key }) => {
            if (scope === 'account') {
              await Promise.all([this.signInFailures(scope).delete(key), this.signInLockout(scope).delete(key)]);
            } else {
              await this.signInFailures(scope).reward(key, 1);
            }
          }),
        );
      },
    };
  }

  private signInFailures(scope: SignInScope): RateLimiterAbstract {
    return this.limiter(`sign-in-failures-${scope}`, SIGN_IN_FAILURES_COUNTED_MAX, SIGN_IN_FAILURES_KEPT_SECONDS);
  }

  /** One attempt per window; the window is each consume's own lockout (`customDuration`) or a `block`. */
  private signInLockout(scope: SignInScope): RateLimiterAbstract {
    return this.limiter(`sign-in-lockout-${scope}`, 1, SIGN_IN_LOCKOUT_MAX_SECONDS);
  }

  /** Counts one request of a public route that names a tenant (the per-tenant public scope). */
  async checkPublicTenant(tenantId: string, requestsPerMinute: number): Promise<Decision> {
    return this.consume('tenant-public', tenantId, requestsPerMinute, WINDOW_SECONDS);
  }
}

/** A refusal wins; otherwise the scope with the fewest requests left decides the headers. */
export function bindingDecision(decisions: Decision[]): Decision {
  const refused = decisions.find((d) => !d.allowed);
  if (refused) return refused;
  return decisions.reduce((tightest, d) => (d.remaining < tightest.remaining ? d : tightest));
}
