import dns from 'node:dns';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

/**
 * Outgoing HTTP to addresses chosen by tenants (webhook receivers), safe
 * against server-side request forgery.
 *
 * - A URL is checked when it is registered and again before every request.
 * - Host names are resolved once per request; every address the resolver
 *   returns must be public (one private answer among public ones rejects the
 *   name, so a resolver cannot alternate its answers), and the connection is
 *   pinned to the checked address through the socket's `lookup`, so nothing
 *   resolves the name a second time.
 * - IP literals in every spelling (`127.1`, `2130706433`, `0x7f.1`,
 *   `[::ffff:7f00:1]`) are normalised by the WHATWG URL parser and then
 *   checked with ipaddr.js; IPv4-mapped IPv6 addresses are unwrapped first.
 * - Redirects are never followed: a 3xx is an answer like any other.
 * - The whole exchange, including a receiver that trickles its response one
 *   byte at a time, ends at the deadline; at most a small part of the response
 *   body is read.
 *
 * The policy is given per request: the process-wide development settings, or
 * a destination's own opt-in to the private network (a sandbox tenant's, outside
 * production; decided by the webhooks module).
 */
export interface SafeHttpPolicy {
  /** Development only: allow loopback receivers (127.0.0.0/8, ::1, localhost). */
  allowLoopback: boolean;
  /** Development only: allow plain http:// URLs. */
  allowHttp: boolean;
  /**
   * Development only, for one destination that opted in: also allow the private
   * network (loopback, RFC 1918, IPv6 unique-local) and single-label host names.
   * Cloud metadata addresses stay refused.
   */
  allowPrivateNetwork?: boolean;
  /** Development only: CA certificates trusted in addition to the bundled roots (WEBHOOK_CA_FILE). */
  trustedCertificates?: TrustedCertificates | null;
}

/** PEM certificates to trust, with a fingerprint that tells one set from another. */
export interface TrustedCertificates {
  /** Where they came from, for messages. */
  source: string;
  pems: readonly string[];
  /** SHA-256 of the certificates: connection pools are kept apart per set. */
  fingerprint: string;
}

export class UnsafeUrlError extends Error {}

/** The only IPv4 and IPv6 range ipaddr.js names `unicast` is the public internet. */
const PUBLIC_RANGE = 'unicast';
const LOOPBACK_RANGE = 'loopback';
const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;
export const RESPONSE_BODY_CAPTURE_BYTES = 1024;
const AGENT_CACHE_ENTRIES_MAX = 256;
const URL_LENGTH_MAX = 2048;

/** Why an address may not be contacted, or null when it may. */
export function blockedAddressReason(address: string, policy: Pick<SafeHttpPolicy, 'allowLoopback'>): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === PUBLIC_RANGE) return null;
  if (range === LOOPBACK_RANGE && policy.allowLoopback) return null;
  // Everything else: private, loopback, link-local, unique-local, multicast,
  // carrier-grade NAT, unspecified, broadcast, reserved, and the IPv6 ranges
  // that embed an IPv4 address (NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo).
  return `the address ${parsed.toString()} is in a non-public range (${range})`;
}

/**
 * Ranges a destination that opted in to the private network may reach, and the
 * cloud metadata endpoints it still may not (AWS, GCP and Azure's link-local
 * address, AWS's IPv6 one, Alibaba's): a local receiver never needs those, and
 * they hand out the host's credentials.
 */
const PRIVATE_NETWORK_RANGES = new Set(['loopback', 'private', 'uniqueLocal']);
const CLOUD_METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((address) => ipaddr.parse(address).toNormalizedString());

/**
 * Why an address may not be contacted under this policy, or null when it may:
 * the classification of `blockedAddressReason`, widened to the private network
 * for a destination that opted in.
 */
function addressRefusal(address: string, policy: SafeHttpPolicy): string | null {
  const reason = blockedAddressReason(address, policy);
  if (reason === null || !policy.allowPrivateNetwork) return reason;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (CLOUD_METADATA_ADDRESSES.includes(parsed.toNormalizedString())) {
    return `the address ${parsed.toString()} is a cloud metadata endpoint, refused even for a private-network destination`;
  }
  return PRIVATE_NETWORK_RANGES.has(parsed.range()) ? null : reason;
}

/** Parses and checks a receiver URL without resolving it. Returns the parsed URL. */
export function checkUrlSyntax(raw: string, policy: SafeHttpPolicy): URL {
  if (raw.length > URL_LENGTH_MAX) throw new UnsafeUrlError(`the URL is longer than ${URL_LENGTH_MAX} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('the URL is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new UnsafeUrlError('the URL must use https');
  }
  if (url.username !== '' || url.password !== '') throw new UnsafeUrlError('the URL may not carry a user name or password');
  if (url.hash !== '') throw new UnsafeUrlError('the URL may not carry a fragment');
  const host = hostOf(url);
  if (host === '') throw new UnsafeUrlError('the URL has no host');
  if (ipaddr.isValid(host)) {
    const reason = addressRefusal(host, policy);
    if (reason) throw new UnsafeUrlError(reason);
  } else {
    const privateNetwork = policy.allowPrivateNetwork === true;
    if (LOCALHOST_NAME.test(host) && !policy.allowLoopback && !privateNetwork) throw new UnsafeUrlError(`the host "${host}" is a loopback name`);
    // A single-label name (a container's service name) resolves through search domains: private network only.
    if (!host.includes('.') && !LOCALHOST_NAME.test(host) && !privateNetwork) throw new UnsafeUrlError(`the host "${host}" is not a fully qualified domain name`);
  }
  return url;
}

/** The host without IPv6 brackets (the WHATWG parser has already normalised IPv4 spellings). */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Checks the URL and resolves its host once. Every resolved address must be
 * allowed; the first one is returned to be pinned for the connection.
 */
export async function resolveSafeTarget(
  raw: string,
  policy: SafeHttpPolicy,
  resolver: Resolver = systemResolver,
): Promise<{ url: URL; address: string; family: 4 | 6 }> {
  const url = checkUrlSyntax(raw, policy);
  const host = hostOf(url);
  if (ipaddr.isValid(host)) {
    return { url, address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 };
  }
  let answers: Array<{ address: string; family: number }>;
  try {
    answers = await resolver(host);
  } catch (error) {
    throw new UnsafeUrlError(`the host "${host}" does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
  if (answers.length === 0) throw new UnsafeUrlError(`the host "${host}" does not resolve`);
  for (const answer of answers) {
    const reason = addressRefusal(answer.address, policy);
    if (reason) throw new UnsafeUrlError(`the host "${host}" resolves to a blocked address: ${reason}`);
  }
  const first = answers[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A socket lookup that answers with the already checked address and never asks DNS. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options && options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * Connections are kept alive per origin, pinned address and set of trusted
 * certificates, so a receiver that takes many deliveries does not pay a TLS
 * handshake for each. A new address (the name now resolves elsewhere) gets a
 * new pool, and so does another WEBHOOK_CA_FILE (a connection verified
 * against one set of roots is never reused under another).
 */
const agents = new Map<string, Agent>();

/**
 * One TLS context per set of trusted certificates: the bundled roots plus the
 * extra ones. Built once, because a `ca` option given per connection would
 * parse some 150 root certificates on every handshake.
 */
const secureContexts = new Map<string, tls.SecureContext>();

function secureContextFor(trusted: TrustedCertificates): tls.SecureContext {
  let context = secureContexts.get(trusted.fingerprint);
  if (!context) {
    context = tls.createSecureContext({ ca: [...tls.rootCertificates, ...trusted.pems] });
    secureContexts.set(trusted.fingerprint, context);
  }
  return context;
}

function agentFor(origin: string, address: string, family: 4 | 6, trusted: TrustedCertificates | null): Agent {
  const key = `${origin}|${address}|${trusted?.fingerprint ?? 'roots'}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  const connect = trusted ? { lookup: pinnedLookup(address, family), secureContext: secureContextFor(trusted) } : { lookup: pinnedLookup(address, family) };
  agent = new Agent({ connect, keepAliveTimeout: 10_000, connections: 32 });
  agents.set(key, agent);
  if (agents.size > AGENT_CACHE_ENTRIES_MAX) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    void oldest.close().catch(() => undefined);
  }
  return agent;
}

export async function closeSafeHttpAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.allSettled(all.map((agent) => agent.close()));
}

export interface SafePostResult {
  /** The HTTP status, or null when no response arrived (refused, timed out, blocked). */
  status: number | null;
  /** The first RESPONSE_BODY_CAPTURE_BYTES bytes of the response body, as text. */
  body: string | null;
  error: string | null;
  durationMs: number;
  /** The address the request went to, once resolved. */
  address: string | null;
}

/**
 * POSTs `body` to `rawUrl`, checking and pinning the address first. Never
 * throws for network or receiver failures: the result says what happened.
 */
export async function safePost(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  policy: SafeHttpPolicy,
  resolver?: Resolver,
): Promise<SafePostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
  let address: string | null = null;
  try {
    const target = await resolveSafeTarget(rawUrl, policy, resolver);
    address = target.address;
    const response = await request(target.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agentFor(target.url.origin, target.address, target.family, policy.trustedCertificates ?? null),
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const captured = await readCapped(response.body, RESPONSE_BODY_CAPTURE_BYTES);
    return { status: response.statusCode, body: captured, error: null, durationMs: elapsed(), address };
  } catch (error) {
    const message = controller.signal.aborted
      ? `timed out after ${timeoutMs} ms`
      : error instanceof UnsafeUrlError
        ? `blocked: ${error.message}`
        : describeNetworkError(error);
    return { status: null, body: null, error: message, durationMs: elapsed(), address };
  } finally {
    clearTimeout(timer);
  }
}

/** Reads at most `limit` bytes, then stops reading and drops the rest of the body. */
async function readCapped(stream: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      stream.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describeNetworkError(error: unknown): string {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.cause?.code ?? err.code;
  const message = err.cause?.message ?? err.message ?? String(error);
  return code ? `${code}: ${message}` : message;
}
