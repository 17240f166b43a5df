import { hash as argonHash } from '@node-rs/argon2';
import type { Database, Tx } from '../../platform/db.js';
import { announceCredentialChange, generateApiKey, type Authenticator } from '../../platform/auth.js';
import { AppError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { checkPassword, type SignInThrottle } from '../../platform/console-auth.js';
import { randomToken, sha256Hex, uuid } from '../../platform/ids.js';
import { clock } from '../../platform/clock.js';
import { effectiveLimits, nextUtcMidnight, type Plan } from '../../platform/plans.js';
import { overridesOf, readTenantLimits } from '../../platform/tenant-limits.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { ensureParticipant } from '../participants/index.js';
import { checkSessionAllowed, engagementExists } from '../../platform/engagements.js';
import { ensureSandbox, sandboxPairOf, tenantEnvironment, type TenantEnvironment } from '../../platform/environments.js';
import * as store from './store.js';
import { WAITING_COUNTED_MAX, type ApiKeyRecord, type UpdateTenantInput } from './schemas.js';

/**
 * Tenants, admin users, API keys and participant sessions: who may call the
 * service, and as whom.
 */

/** An admin login token for an active user's email and password (platform/console-auth.ts checks and throttles them, as for the console). */
export async function login(db: Database, authenticator: Authenticator, throttle: SignInThrottle, email: string, password: string, address: string | null) {
  const user = await checkPassword(db, throttle, email, password, address);
  const { token, expiresAt } = await authenticator.issueJwt(user.tenantId, user.id, user.tokenVersion);
  return { token, token_type: 'Bearer' as const, expires_at: expiresAt.toISOString(), tenant_id: user.tenantId };
}

export interface CreateTenantInput {
  name: string;
  slug: string;
  plan: Plan;
  adminEmail?: string;
  timezone?: string;
  requestsPerMinute?: number | null;
  /** The tenant's own daily event-ingestion quota (enterprise "custom"); null keeps the plan's. */
  eventIngestionPerDay?: number | null;
  /** 'sandbox' makes a tenant for integration tests, whose test controls work and whose keys are `lk_test_`; default 'live'. */
  environment?: TenantEnvironment;
}

/** Creates a tenant with its first admin user and a first API key holding every admin scope. */
export async function createTenant(db: Database, input: CreateTenantInput) {
  const tenantId = uuid();
  const adminEmail = input.adminEmail ?? `admin@${input.slug}.example`;
  const adminPassword = randomToken(18);
  const passwordHash = await argonHash(adminPassword);
  const environment = input.environment ?? 'live';
  const generated = generateApiKey(environment === 'sandbox' ? 'test' : 'live');
  const scopes = ['admin', 'gamify:admin', 'read:pii'];
  await db.systemTx(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM tenants WHERE slug = $1', [input.slug]);
    if (taken.rowCount) throw new AppError('conflict', 'TENANT_SLUG_TAKEN', `a tenant with the slug "${input.slug}" already exists`);
    const emailTaken = await tx.query('SELECT 1 FROM admin_users WHERE lower(email) = lower($1)', [adminEmail]);
    if (emailTaken.rowCount) throw new AppError('conflict', 'ADMIN_EMAIL_TAKEN', `an admin user with the email "${adminEmail}" already exists`);
    await tx.query(
      `INSERT INTO tenants (id, slug, name, plan, rate_limit_per_minute, event_ingestion_per_day, timezone, environment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [tenantId, input.slug, input.name, input.plan, input.requestsPerMinute ?? null, input.eventIngestionPerDay ?? null, input.timezone ?? 'UTC', environment],
    );
    await tx.query(`INSERT INTO admin_users (tenant_id, id, email, password_hash) VALUES ($1, $2, $3, $4)`, [tenantId, uuid(), adminEmail, passwordHash]);
    await store.insertApiKey(tx, tenantId, {
      id: uuid(),
      name: 'first admin key',
      environment: environment === 'sandbox' ? 'test' : 'live',
      prefix: generated.prefix,
      hash: generated.hash,
      scopes,
      rateLimitPerMinute: null,
    });
  });
  return {
    tenant_id: tenantId,
    slug: input.slug,
    name: input.name,
    plan: input.plan,
    environment,
    admin_email: adminEmail,
    admin_password: adminPassword,
    api_key: generated.key,
    api_key_scopes: scopes,
  };
}

/**
 * Where a new key is kept. A live tenant's `test` keys live in its sandbox
 * (made on first use), so they reach the sandbox's data and never the live
 * data; a sandbox issues test keys only.
 */
async function keyHome(db: Database, tenantId: string, asked: 'live' | 'test' | undefined): Promise<{ environment: 'live' | 'test'; keyTenantId: string }> {
  const tenantIs = await tenantEnvironment(db, tenantId);
  if (!tenantIs) throw notFound('tenant');
  if (tenantIs === 'sandbox') {
    if (asked === 'live') throw invalid('a sandbox issues test keys only (environment "test"); create live keys with a credential of the live tenant', 'LIVE_KEY_IN_SANDBOX');
    return { environment: 'test', keyTenantId: tenantId };
  }
  if (asked === 'test') return { environment: 'test', keyTenantId: (await ensureSandbox(db, tenantId)).sandboxTenantId };
  return { environment: 'live', keyTenantId: tenantId };
}

/** The tenants whose keys a credential of `tenantId` manages: its own, and a live tenant's sandbox. */
async function keyTenants(db: Database, tenantId: string): Promise<string[]> {
  const pair = await sandboxPairOf(db, tenantId);
  return pair && pair.liveTenantId === tenantId ? [tenantId, pair.sandboxTenantId] : [tenantId];
}

/** Runs `change` on the first of the managed tenants that holds the key; null when none does. */
async function onKeyTenant<T>(db: Database, tenantId: string, change: (tx: Tx, keyTenantId: string) => Promise<T | null>): Promise<T | null> {
  for (const keyTenantId of await keyTenants(db, tenantId)) {
    const result = await db.tenant(keyTenantId, (tx) => change(tx, keyTenantId));
    if (result) return result;
  }
  return null;
}

export async function createApiKey(
  db: Database,
  tenantId: string,
  input: { name: string; environment?: 'live' | 'test'; scopes: string[]; rate_limit_per_minute?: number },
) {
  const { environment, keyTenantId } = await keyHome(db, tenantId, input.environment);
  const generated = generateApiKey(environment);
  const record = await db.tenant(keyTenantId, async (tx) => {
    // Counted under the tenant row's lock, then the limit read: an operator's change of the limit waits for, or is seen by, this creation.
    const active = await store.countActiveKeysLocked(tx, keyTenantId);
    const tenant = await readTenantLimits(tx, keyTenantId);
    if (!tenant) throw notFound('tenant');
    const { value: quota, source } = tenant.limits.apiKeys;
    if (quota !== null && active >= quota) {
      const whose = source === 'override' ? "the tenant's limit" : `the ${tenant.plan} plan`;
      throw ruleViolation(`${whose} allows ${quota} API keys; revoke one or change plan`, 'PLAN_QUOTA_EXCEEDED', { quota });
    }
    return store.insertApiKey(tx, keyTenantId, {
      id: uuid(),
      name: input.name,
      environment,
      prefix: generated.prefix,
      hash: generated.hash,
      scopes: input.scopes,
      rateLimitPerMinute: input.rate_limit_per_minute ?? null,
    });
  });
  return { ...record, key: generated.key };
}

/** A live tenant's list holds its sandbox's test keys too, in one order (created_at, id). */
export async function listApiKeys(db: Database, tenantId: string, query: { include_revoked?: boolean; limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'uuid' });
  const lists = await Promise.all(
    (await keyTenants(db, tenantId)).map((keyTenantId) => db.tenant(keyTenantId, (tx) => store.listApiKeys(tx, keyTenantId, query.include_revoked ?? false, after, limit))),
  );
  const rows = lists.flat().sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { api_keys: page, next_cursor: rows.length > limit && last ? encodeCursor({ created_at: last.created_at, id: last.id }) : null };
}

export async function updateApiKey(
  db: Database,
  authenticator: Authenticator,
  tenantId: string,
  id: string,
  changes: { name?: string; scopes?: string[]; rate_limit_per_minute?: number | null },
): Promise<ApiKeyRecord> {
  const record = await onKeyTenant(db, tenantId, async (tx, keyTenantId) => {
    const updated = await store.updateApiKey(tx, keyTenantId, id, {
      name: changes.name,
      scopes: changes.scopes,
      rateLimitPerMinute: changes.rate_limit_per_minute,
    });
    if (updated) await announceCredentialChange(tx, id);
    return updated;
  });
  if (!record) throw notFound('API key');
  authenticator.forgetCredentials();
  return record;
}

export async function revokeApiKey(db: Database, authenticator: Authenticator, tenantId: string, id: string): Promise<ApiKeyRecord> {
  const record = await onKeyTenant(db, tenantId, async (tx, keyTenantId) => {
    const revoked = await store.revokeApiKey(tx, keyTenantId, id);
    if (revoked) await announceCredentialChange(tx, id);
    return revoked;
  });
  if (!record) throw notFound('API key');
  authenticator.forgetCredentials();
  return record;
}

/**
 * Gives a key a new secret and returns it once. The old secret is refused from
 * the moment this commits, in every process (no grace period: a rotation is
 * most often asked for because the old secret leaked; see
 * docs/decisions/console-developers.md). The key keeps its id, name, scopes and
 * limits.
 */
export async function rotateApiKey(db: Database, authenticator: Authenticator, tenantId: string, id: string) {
  const record = await onKeyTenant(db, tenantId, async (tx, keyTenantId) => {
    const existing = await tx.query<{ environment: 'live' | 'test' }>('SELECT environment FROM api_keys WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [keyTenantId, id]);
    if (!existing.rows[0]) return null;
    const generated = generateApiKey(existing.rows[0].environment);
    const rotated = await store.rotateApiKey(tx, keyTenantId, id, generated);
    if (!rotated) return null;
    await announceCredentialChange(tx, id);
    return { ...rotated, key: generated.key };
  });
  if (!record) throw notFound('API key');
  authenticator.forgetCredentials();
  return record;
}

/** A session as issued, for `createSession`'s caller to remember (`Authenticator.rememberIssuedSession`). */
export interface IssuedSession {
  token: string;
  id: string;
  participantId: string;
  engagementId: string;
  expiresAt: Date;
}

export async function createSession(
  db: Database,
  tenantId: string,
  input: { participant_id: string; engagement_id: string; display_name?: string; ttl_seconds?: number },
  defaultTtlSeconds: number,
  issued?: (session: IssuedSession) => void,
) {
  const token = `ses_${randomToken(24)}`;
  const id = uuid();
  const expiresAt = new Date(clock.nowMs() + (input.ttl_seconds ?? defaultTtlSeconds) * 1000);
  await db.tenant(tenantId, async (tx) => {
    // Until a module owns engagements, the id is taken on trust (see docs/decisions/foundation.md).
    if ((await engagementExists(tx, tenantId, input.engagement_id)) === false) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
    await ensureParticipant(tx, tenantId, input.participant_id, input.display_name);
    // An engagement for a segment refuses non-members (403 NOT_IN_SEGMENT); the participant made above goes with the refusal.
    await checkSessionAllowed(tx, tenantId, input.engagement_id, input.participant_id);
    await store.insertSession(tx, tenantId, {
      id,
      tokenHash: sha256Hex(token),
      participantId: input.participant_id,
      engagementId: input.engagement_id,
      expiresAt,
    });
  });
  issued?.({ token, id, participantId: input.participant_id, engagementId: input.engagement_id, expiresAt });
  return { session_id: token, participant_id: input.participant_id, engagement_id: input.engagement_id, expires_at: expiresAt.toISOString() };
}

export async function readTenant(db: Database, tenantId: string) {
  const tenant = await store.readTenantOnce(db, tenantId);
  if (!tenant) throw notFound('tenant');
  const limits = effectiveLimits(tenant.plan, overridesOf(tenant));
  return {
    tenant_id: tenant.id,
    slug: tenant.slug,
    name: tenant.name,
    plan: tenant.plan,
    environment: tenant.environment,
    timezone: tenant.timezone,
    currency: tenant.currency,
    locale: tenant.locale,
    require_four_eyes: tenant.require_four_eyes,
    requests_per_minute: limits.requestsPerMinute.value,
    quotas: {
      participants_per_month: limits.participantsPerMonth.value,
      api_keys: limits.apiKeys.value,
      event_ingestion_per_day: limits.eventIngestionPerDay.value,
      headless_sdk: limits.headlessSdk.value,
      concurrent_engagements: limits.concurrentEngagements.value,
    },
  };
}

const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** The BCP 47 tag in its canonical form, or null when it is not one. */
function canonicalLocale(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical ?? null;
  } catch {
    return null;
  }
}

/** Whether `Intl` (and so the console, the SDK and any JavaScript reader) can format dates in the zone. */
function timeZoneKnownToIntl(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Changes the tenant's time zone, currency, locale or four-eyes publishing
 * (`require_four_eyes`, read by platform/publishing.ts). Every reader of the time
 * zone (daily caps, streaks, leaderboard periods, analytics, rule backtests)
 * reads it from the tenants row in its own statement, and no process caches
 * it, so the next computation uses the new zone.
 */
export async function updateTenant(db: Database, tenantId: string, input: UpdateTenantInput) {
  const currency = input.currency?.toUpperCase() ?? null;
  if (currency !== null && !KNOWN_CURRENCIES.has(currency)) throw invalid(`"${input.currency}" is not an ISO 4217 currency code`, 'TENANT_CURRENCY_UNKNOWN');
  const locale = input.locale === undefined ? null : canonicalLocale(input.locale);
  if (input.locale !== undefined && locale === null) throw invalid(`"${input.locale}" is not a BCP 47 language tag`, 'TENANT_LOCALE_INVALID');
  const timezone = input.timezone ?? null;
  // The zone must be known to both: PostgreSQL computes the calendar days, JavaScript readers format them.
  if (timezone !== null && !timeZoneKnownToIntl(timezone)) throw invalid(`"${timezone}" is not an IANA time zone`, 'TENANT_TIMEZONE_UNKNOWN');
  await db.tenant(tenantId, async (tx) => {
    if (timezone !== null && !(await store.timeZoneKnown(tx, timezone))) throw invalid(`"${timezone}" is not an IANA time zone`, 'TENANT_TIMEZONE_UNKNOWN');
    if (!(await store.updateTenantSettings(tx, tenantId, { timezone, currency, locale, requireFourEyes: input.require_four_eyes ?? null }))) throw notFound('tenant');
  });
  return readTenant(db, tenantId);
}

/** What the tenant used of its plan's quotas: this UTC day, this UTC month, right now. */
export async function readUsage(db: Database, tenantId: string) {
  const now = clock.now();
  const day = now.toISOString().slice(0, 10);
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const usage = await store.readUsage(db, tenantId, day, monthStart);
  if (!usage) throw notFound('tenant');
  const limits = effectiveLimits(usage.plan, overridesOf(usage));
  const figure = (used: number, quota: number | null) => ({ used, quota, exceeded: quota !== null && used > quota });
  const atCapacity = (used: number, quota: number | null) => ({ used, quota, exceeded: quota !== null && used >= quota });
  return {
    day,
    month: day.slice(0, 7),
    participants_this_month: figure(usage.participants_this_month, limits.participantsPerMonth.value),
    events_today: {
      ...atCapacity(usage.events_today, limits.eventIngestionPerDay.value),
      resets_at: nextUtcMidnight(now).toISOString(),
    },
    api_keys: atCapacity(usage.api_keys, limits.apiKeys.value),
    concurrent_engagements: atCapacity(usage.published_engagements, limits.concurrentEngagements.value),
    event_processing: {
      waiting: Math.min(usage.events_waiting, WAITING_COUNTED_MAX),
      waiting_capped: usage.events_waiting > WAITING_COUNTED_MAX,
      lag_seconds: usage.oldest_waiting_received_at ? Math.max(0, Math.round(now.getTime() - usage.oldest_waiting_received_at.getTime()) / 1000) : 0,
    },
  };
}
