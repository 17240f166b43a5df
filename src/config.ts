import fs from 'node:fs';
import path from 'node:path';
import { createHash, X509Certificate } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { TrustedCertificates } from './platform/safe-http.js';

/** How long an unused pooled connection stays open unless DB_POOL_IDLE_SECONDS says otherwise (also the default of `new Database`). */
export const DEFAULT_POOL_IDLE_SECONDS = 300;

/**
 * Every setting of the service, read once from the environment and validated.
 * Defaults are the spec's values; the timing settings exist so that tests and
 * demos can run schedules in seconds instead of hours.
 */
export type Role = 'all' | 'api' | 'worker';
export type AppEnv = 'production' | 'development' | 'test';

export interface Config {
  env: AppEnv;
  role: Role;
  host: string;
  port: number;
  dataDir: string;
  /** Set when an external PostgreSQL is used; unset means the embedded server. */
  databaseUrl: string | null;
  /** A streaming replica of the database (DATABASE_REPLICA_URL) for reads that may lag: leaderboards, history, analytics. */
  databaseReplicaUrl: string | null;
  embeddedPostgresPort: number;
  dbPoolSize: number;
  /** Connections of the request pool opened at start and never closed for idleness (DB_POOL_MIN, default DB_POOL_SIZE). */
  dbPoolMin: number;
  /** How long an unused pooled connection stays open (DB_POOL_IDLE_SECONDS); a new one costs a backend start, authentication and cold caches. */
  dbPoolIdleSeconds: number;
  /** Statements with parameters are sent as named (prepared) statements; off behind a transaction-mode pooler that cannot keep them. */
  dbPreparedStatements: boolean;
  /** The nice value of the backends that run background work (DB_BACKGROUND_NICE, 0–19); null: 10 on the embedded server, else 0. */
  dbBackgroundNice: number | null;
  appDbPassword: string | null;
  jwtSecret: string | null;
  jwtTtlSeconds: number;
  /**
   * The platform operator's bearer token (OPERATOR_TOKEN): the one credential of
   * the `/api/v1/operator/` routes (plans and limits of any tenant). Null: those routes are off.
   */
  operatorToken: string | null;
  redisUrl: string | null;
  logLevel: string;
  publicBaseUrl: string | null;
  /**
   * Which proxies in front of the service are trusted to say who the caller is
   * (X-Forwarded-For, -Proto, -Host), from TRUST_PROXY: none (false), every hop
   * (true: anyone can then choose the address seen), a number of hops, or the
   * proxies' addresses and CIDR ranges. `trustProxyOption` turns it into
   * Fastify's option.
   */
  trustProxy: TrustProxy;
  bodyLimitBytes: number;
  /** Requests one process has in progress before it answers new ones 503 SERVICE_OVERLOADED (SERVICE_IN_FLIGHT_MAX; platform/overload.ts). */
  maxInFlight: number;
  /** Batches of activity completions, each of another activity, one process has in the database before new ones wait and go together (COMPLETIONS_IN_FLIGHT; activities/completion-batches.ts). */
  completionsInFlight: number;
  rateLimits: {
    ipPerMinute: number;
    keyPerMinute: number;
    ingestBurstPerSecond: number;
    /** Routes marked `rateLimit: 'listing'` (participant listing and search): per caller, per 60 s. */
    listingPerMinute: number;
  };
  /** How long personal-data access log rows are kept; at least 12 months (spec: Limits). */
  piiAccessLogRetentionMonths: number;
  /** How long outbox events are kept once dispatched (live-stream resume and webhook payloads of retries and replays). */
  outboxRetentionDays: number;
  /** How long finished webhook deliveries (with their attempts) and replay jobs are kept. */
  webhookLogRetentionDays: number;
  /** How long a public leaderboard answer is kept in memory (LEADERBOARD_READ_CACHE_TTL_MS, 0 to 1000 ms; 0: off). */
  leaderboardReadCacheTtlMs: number;
  /** How long an expired or revoked participant session is kept. */
  sessionRetentionDays: number;
  /** Multiplies every schedule interval (webhook backoff, lifecycle ticks). 1 is the spec's timing. */
  timeScale: number;
  /** Development only: lets webhook destinations point at loopback receivers. */
  allowLoopbackWebhooks: boolean;
  /** Development only: accept plain http:// webhook URLs (for local receivers). */
  allowHttpWebhooks: boolean;
  /**
   * Development only (`WEBHOOK_CA_FILE`): CA certificates trusted for webhook
   * deliveries in addition to the bundled roots, so a local receiver may use
   * its own CA. Null when unset.
   */
  webhookCa: TrustedCertificates | null;
  sessionTtlSeconds: number;
  jobConcurrency: number;
  /** How long a job queue worker may be silent before its jobs are handed to another. */
  workerStaleAfterSeconds: number;
  /** How often an idle worker looks for accepted events without a wake-up (a wake-up on arrival makes it look at once). */
  eventLookIntervalMs: number;
  /** A worker process's own `/metrics` and `/healthz` port (SERVICE_ROLE=worker); null: none. */
  metricsPort: number | null;
  /** OpenTelemetry traces; null (the default) when no OTLP endpoint is set: no SDK is loaded then. */
  tracing: TracingConfig | null;
}

/**
 * Traces over OTLP/HTTP, configured by the standard OpenTelemetry variables.
 * The exporter itself also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
 * _COMPRESSION and the certificate variables, and the SDK OTEL_TRACES_SAMPLER,
 * from the process environment.
 */
export interface TracingConfig {
  /** Where spans are posted: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended. */
  tracesUrl: string;
  protocol: 'http/protobuf' | 'http/json';
  /** `service.name` of every span (OTEL_SERVICE_NAME). */
  serviceName: string;
  /** Further resource attributes (OTEL_RESOURCE_ATTRIBUTES, `key=value,…`). */
  resourceAttributes: Record<string, string>;
  /** How long finished spans wait before they are sent in a batch (OTEL_BSP_SCHEDULE_DELAY). */
  exportDelayMs: number;
}

export class ConfigError extends Error {}

export type TrustProxy = boolean | number | readonly string[];

/** proxy-addr's names for address ranges, accepted in a TRUST_PROXY list. */
const TRUST_PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const TRUST_PROXY_HOPS_MAX = 10;
export const TRUST_PROXY_EVERY_HOP_WARNING =
  'TRUST_PROXY=true trusts every hop of X-Forwarded-For: any client can choose the address the service sees (rate limits, sign-in lockouts, audit and access-log addresses). ' +
  'Set the number of proxies in front of the service (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8) instead.';

function isAddressOrRange(entry: string): boolean {
  return (
    TRUST_PROXY_RANGE_NAMES.includes(entry) ||
    ipaddr.IPv4.isValidFourPartDecimal(entry) ||
    ipaddr.IPv6.isValid(entry) ||
    ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) ||
    ipaddr.IPv6.isValidCIDR(entry)
  );
}

/**
 * TRUST_PROXY: `false` (the default), `true` (every hop; warned about at start),
 * a hop count from 1 to TRUST_PROXY_HOPS_MAX, or a comma-separated list of the
 * proxies' addresses and CIDR ranges (and proxy-addr's `loopback`,
 * `linklocal`, `uniquelocal`). Anything else fails the start.
 */
function readTrustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  const lower = raw.toLowerCase();
  if (raw === '' || lower === 'false' || raw === '0') return false;
  if (lower === 'true') return true;
  const explain = `TRUST_PROXY must be false, a number of proxies in front of the service (1 to ${TRUST_PROXY_HOPS_MAX}), a comma-separated list of the proxies' addresses or CIDR ranges (for example 10.0.0.0/8,192.168.1.5; also loopback, linklocal, uniquelocal), or true (every hop, not recommended), got "${raw}"`;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > TRUST_PROXY_HOPS_MAX) throw new ConfigError(explain);
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const wrong = entries.find((entry) => !isAddressOrRange(entry));
  if (wrong !== undefined) throw new ConfigError(`${explain}: "${wrong}" is not an address, a CIDR range or a range name`);
  return entries;
}

/**
 * Fastify's `trustProxy` for the setting. A hop count becomes a function that
 * trusts the nearest `hops` addresses (the socket's peer, then X-Forwarded-For
 * from the right), proxy-addr's meaning of a count: Fastify 5 itself refuses
 * every hop for a number, which would make every caller look like the proxy.
 */
export function trustProxyOption(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return setting === 0 ? false : (_address, hop) => hop < setting;
  return typeof setting === 'boolean' ? setting : [...setting];
}

/**
 * The longest (and default) time a public leaderboard answer is kept in
 * memory: the shortest refresh interval a board can have (1 s), so an answer
 * is never older than one refresh (modules/leaderboards/read-cache.ts).
 */
export const LEADERBOARD_READ_CACHE_TTL_MAX_MS = 1000;

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function readNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function readBool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/**
 * OPERATOR_TOKEN: 32 to 256 letters, digits, `-` or `_` (`openssl rand -hex 32`), so that it can
 * never be taken for an API key (`lk_…`) or an admin token (a JWT has dots).
 */
function readOperatorToken(env: NodeJS.ProcessEnv): string | null {
  const raw = env.OPERATOR_TOKEN;
  if (raw === undefined || raw === '') return null;
  if (!/^[A-Za-z0-9_-]{32,256}$/.test(raw) || raw.startsWith('lk_')) {
    throw new ConfigError('OPERATOR_TOKEN must be 32 to 256 letters, digits, "-" or "_", not starting with "lk_" (for example: openssl rand -hex 32)');
  }
  return raw;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** A CA file larger than this is a mistake (a whole disk image, a log), not a bundle of certificates. */
const CA_FILE_BYTES_MAX = 1024 * 1024;

/** Reads a PEM bundle: readable, at most 1 MB, at least one certificate, every certificate valid. */
function readCertificateFile(env: NodeJS.ProcessEnv, name: string): TrustedCertificates | null {
  const file = env[name];
  if (file === undefined || file === '') return null;
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > CA_FILE_BYTES_MAX) throw new ConfigError(`${name} (${file}) is larger than ${CA_FILE_BYTES_MAX} bytes; it should hold PEM certificates only`);
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${name} (${file}) cannot be read: ${(error as Error).message}`);
  }
  const pems = text.match(PEM_CERTIFICATE) ?? [];
  if (pems.length === 0) throw new ConfigError(`${name} (${file}) holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  pems.forEach((pem, index) => {
    try {
      new X509Certificate(pem);
    } catch (error) {
      throw new ConfigError(`${name} (${file}): certificate ${index + 1} of ${pems.length} is not a valid certificate (${(error as Error).message})`);
    }
  });
  const fingerprint = createHash('sha256').update(pems.join('\n')).digest('hex');
  return { source: path.resolve(file), pems, fingerprint };
}

const DEFAULT_SERVICE_NAME = 'loyalty-service';
const PROTOCOLS: ReadonlyArray<TracingConfig['protocol']> = ['http/protobuf', 'http/json'];

function readUrl(env: NodeJS.ProcessEnv, name: string): URL {
  let url: URL;
  try {
    url = new URL(env[name]!);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${env[name]}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http:// or https:// URL, got "${env[name]}"`);
  return url;
}

/** `key=value,key=value` with percent-encoded values, as the OpenTelemetry specification defines OTEL_RESOURCE_ATTRIBUTES. */
function readResourceAttributes(env: NodeJS.ProcessEnv): Record<string, string> {
  const raw = env.OTEL_RESOURCE_ATTRIBUTES ?? '';
  const attributes: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new ConfigError(`OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, got "${pair}"`);
    try {
      attributes[pair.slice(0, equals).trim()] = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      throw new ConfigError(`OTEL_RESOURCE_ATTRIBUTES: the value of ${pair.slice(0, equals).trim()} is not valid percent-encoding`);
    }
  }
  return attributes;
}

/**
 * Traces are on only when an OTLP endpoint is named, and OTEL_SDK_DISABLED or
 * OTEL_TRACES_EXPORTER=none do not switch them off. Only OTLP over HTTP is
 * built in; gRPC would add a second transport stack for the same data.
 */
function readTracing(env: NodeJS.ProcessEnv): TracingConfig | null {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || '';
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT || '';
  if (specific === '' && general === '') return null;
  if (readBool(env, 'OTEL_SDK_DISABLED')) return null;
  const exporter = (env.OTEL_TRACES_EXPORTER || 'otlp').trim().toLowerCase();
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${env.OTEL_TRACES_EXPORTER}"`);
  let tracesUrl: string;
  if (specific !== '') tracesUrl = readUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').href;
  else {
    const base = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT').href;
    tracesUrl = `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
  }
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = (env[protocolVariable] || 'http/protobuf') as TracingConfig['protocol'];
  if (!PROTOCOLS.includes(protocol)) {
    throw new ConfigError(`${protocolVariable} must be http/protobuf or http/json (gRPC is not built in), got "${env[protocolVariable]}"`);
  }
  const resourceAttributes = readResourceAttributes(env);
  return {
    tracesUrl,
    protocol,
    // The specification's order: OTEL_SERVICE_NAME wins over a service.name among the resource attributes.
    serviceName: env.OTEL_SERVICE_NAME || resourceAttributes['service.name'] || DEFAULT_SERVICE_NAME,
    resourceAttributes,
    exportDelayMs: readInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 1, 600_000),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const appEnv = (env.APP_ENV ?? (env.NODE_ENV === 'production' ? 'production' : 'development')) as AppEnv;
  if (!['production', 'development', 'test'].includes(appEnv)) {
    throw new ConfigError(`APP_ENV must be production, development or test, got "${appEnv}"`);
  }
  const role = (env.SERVICE_ROLE ?? 'all') as Role;
  if (!['all', 'api', 'worker'].includes(role)) {
    throw new ConfigError(`SERVICE_ROLE must be all, api or worker, got "${role}"`);
  }
  const dbPoolSize = readInt(env, 'DB_POOL_SIZE', 20, 1, 500);
  const config: Config = {
    env: appEnv,
    role,
    host: env.HOST || '127.0.0.1',
    port: readInt(env, 'PORT', 3000, 0, 65535),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || null,
    databaseReplicaUrl: env.DATABASE_REPLICA_URL || null,
    embeddedPostgresPort: readInt(env, 'EMBEDDED_PG_PORT', 54329, 1024, 65535),
    dbPoolSize,
    dbPoolMin: readInt(env, 'DB_POOL_MIN', dbPoolSize, 0, dbPoolSize),
    dbPoolIdleSeconds: readInt(env, 'DB_POOL_IDLE_SECONDS', DEFAULT_POOL_IDLE_SECONDS, 1, 86_400),
    dbPreparedStatements: env.DB_PREPARED_STATEMENTS === undefined || env.DB_PREPARED_STATEMENTS === '' ? true : readBool(env, 'DB_PREPARED_STATEMENTS'),
    dbBackgroundNice: env.DB_BACKGROUND_NICE === undefined || env.DB_BACKGROUND_NICE === '' ? null : readInt(env, 'DB_BACKGROUND_NICE', 0, 0, 19),
    appDbPassword: env.DB_APP_PASSWORD || null,
    jwtSecret: env.JWT_SECRET || null,
    jwtTtlSeconds: readInt(env, 'JWT_TTL_SECONDS', 3600, 60, 7 * 24 * 3600),
    operatorToken: readOperatorToken(env),
    redisUrl: env.REDIS_URL || null,
    logLevel: env.LOG_LEVEL || (appEnv === 'test' ? 'silent' : 'info'),
    // The service's address as its clients reach it (https://loyalty.example.com): absolute URLs in answers
    // (embed_url, referral links, doc_url), cookie Secure and the docs' server. Unset: each request's own origin.
    publicBaseUrl: env.PUBLIC_BASE_URL ? readUrl(env, 'PUBLIC_BASE_URL').href.replace(/\/+$/, '') : null,
    trustProxy: readTrustProxy(env),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    maxInFlight: readInt(env, 'SERVICE_IN_FLIGHT_MAX', 1000, 1, 1_000_000),
    completionsInFlight: readInt(env, 'COMPLETIONS_IN_FLIGHT', 2, 1, 64),
    rateLimits: {
      ipPerMinute: readInt(env, 'RATE_LIMIT_IP_PER_MINUTE', 100, 1, 10_000_000),
      keyPerMinute: readInt(env, 'RATE_LIMIT_KEY_PER_MINUTE', 1000, 1, 10_000_000),
      ingestBurstPerSecond: readInt(env, 'RATE_LIMIT_INGEST_BURST_PER_SECOND', 100, 1, 10_000_000),
      listingPerMinute: readInt(env, 'RATE_LIMIT_LISTING_PER_MINUTE', 60, 1, 10_000_000),
    },
    piiAccessLogRetentionMonths: readInt(env, 'PII_ACCESS_LOG_RETENTION_MONTHS', 12, 12, 1200),
    outboxRetentionDays: readInt(env, 'OUTBOX_RETENTION_DAYS', 30, 1, 3650),
    webhookLogRetentionDays: readInt(env, 'WEBHOOK_LOG_RETENTION_DAYS', 30, 1, 3650),
    leaderboardReadCacheTtlMs: readInt(env, 'LEADERBOARD_READ_CACHE_TTL_MS', LEADERBOARD_READ_CACHE_TTL_MAX_MS, 0, LEADERBOARD_READ_CACHE_TTL_MAX_MS),
    sessionRetentionDays: readInt(env, 'SESSION_RETENTION_DAYS', 7, 0, 3650),
    timeScale: readNumber(env, 'TIME_SCALE', 1, 0.0001, 1),
    allowLoopbackWebhooks: readBool(env, 'ALLOW_LOOPBACK_WEBHOOKS'),
    allowHttpWebhooks: readBool(env, 'ALLOW_HTTP_WEBHOOKS'),
    // Never read in production: the setting is refused there before anything is trusted.
    webhookCa: appEnv === 'production' ? null : readCertificateFile(env, 'WEBHOOK_CA_FILE'),
    sessionTtlSeconds: readInt(env, 'SESSION_TTL_SECONDS', 24 * 3600, 60, 90 * 24 * 3600),
    jobConcurrency: readInt(env, 'JOB_CONCURRENCY', 8, 1, 100),
    workerStaleAfterSeconds: readInt(env, 'WORKER_STALE_AFTER_SECONDS', 30, 5, 3600),
    eventLookIntervalMs: readInt(env, 'EVENT_LOOK_INTERVAL_MS', 1000, 10, 600_000),
    metricsPort: env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? null : readInt(env, 'METRICS_PORT', 0, 0, 65535),
    tracing: readTracing(env),
  };
  if (config.env === 'production') {
    const unsafe: string[] = [];
    if (config.timeScale !== 1) unsafe.push('TIME_SCALE');
    if (config.allowLoopbackWebhooks) unsafe.push('ALLOW_LOOPBACK_WEBHOOKS');
    if (config.allowHttpWebhooks) unsafe.push('ALLOW_HTTP_WEBHOOKS');
    if (env.WEBHOOK_CA_FILE) unsafe.push('WEBHOOK_CA_FILE');
    if (unsafe.length > 0) {
      throw new ConfigError(`${unsafe.join(', ')} may not be set in production (APP_ENV=production)`);
    }
    if (!config.jwtSecret || config.jwtSecret.length < 32) {
      throw new ConfigError('JWT_SECRET of at least 32 characters is required in production');
    }
  }
  return config;
}
