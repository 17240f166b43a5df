import dns from 'node:dns';
import tls from 'node:tls';
import net, { type LookupFunction } from 'node:net';
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
 *   `[::127.0.0.1]`) are normalised by the WHATWG URL parser; addresses from
 *   the resolver must be in standard notation. IPv6 forms that embed an IPv4
 *   address are refused, except IPv4-mapped ones, which are unwrapped and
 *   checked as IPv4 (IPV6_FORMS_EMBEDDING_IPV4 below). Then only public
 *   unicast is allowed: ipaddr.js's `unicast` range, and for IPv6 only within
 *   the global unicast block 2000::/3.
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
/** IANA's global unicast block; the rest of the IPv6 space is special-purpose or unassigned. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;
export const RESPONSE_BODY_CAPTURE_BYTES = 1024;
const AGENT_CACHE_ENTRIES_MAX = 256;
const URL_LENGTH_MAX = 2048;

type Hextets = number[];

/** An IPv6 form that carries an IPv4 address, and where in the 128 bits that address sits. */
interface EmbeddingForm {
  name: string;
  matches(hextets: Hextets): boolean;
  /** The embedded IPv4 address as four octets. */
  embedded(hextets: Hextets): number[];
  /** Unwrap and check the IPv4 address (true), or refuse the form whatever it embeds (false). */
  unwrap: boolean;
}

function inPrefix(cidr: string): (hextets: Hextets) => boolean {
  const range = ipaddr.IPv6.parseCIDR(cidr);
  return (hextets) => new ipaddr.IPv6(hextets).match(range);
}

const octetsOf = (high: number, low: number): number[] => [high >> 8, high & 0xff, low >> 8, low & 0xff];
const lastThirtyTwoBits = (h: Hextets): number[] => octetsOf(h[6], h[7]);
const isUnspecifiedOrLoopback = (h: Hextets): boolean => h.slice(0, 7).every((hextet) => hextet === 0) && h[7] <= 1;
const inIpv4CompatibleBlock = inPrefix('::/96');

/**
 * Every IPv6 form known to embed an IPv4 address. Where such an address leads
 * depends on translators and relays on the path (a NAT64 gateway or a 6to4
 * relay inside our own network reaches the embedded address), so each is
 * refused whatever it embeds, public or not: a real receiver has a native
 * address. IPv4-mapped addresses are the exception: that is how dual-stack
 * resolvers present a plain IPv4 answer, and the kernel connects to the IPv4
 * address itself, so they are unwrapped and checked as IPv4.
 * docs/decisions/webhooks.md, "Destination filter: IPv6 forms embedding IPv4".
 */
const IPV6_FORMS_EMBEDDING_IPV4: readonly EmbeddingForm[] = [
  { name: 'IPv4-mapped IPv6 (::ffff:0:0/96)', matches: inPrefix('::ffff:0:0/96'), embedded: lastThirtyTwoBits, unwrap: true },
  {
    // :: and ::1 sit inside ::/96 too; they are classified as unspecified and loopback below.
    name: 'IPv4-compatible IPv6 (::/96)',
    matches: (h) => inIpv4CompatibleBlock(h) && !isUnspecifiedOrLoopback(h),
    embedded: lastThirtyTwoBits,
    unwrap: false,
  },
  { name: 'IPv4-translated IPv6 (::ffff:0:0:0/96)', matches: inPrefix('::ffff:0:0:0/96'), embedded: lastThirtyTwoBits, unwrap: false },
  { name: 'NAT64 under the well-known prefix (64:ff9b::/96)', matches: inPrefix('64:ff9b::/96'), embedded: lastThirtyTwoBits, unwrap: false },
  {
    // RFC 6052 layout for a /48 prefix: two octets in bits 48-63, the reserved octet, then two more.
    name: 'NAT64 under the local-use prefix (64:ff9b:1::/48)',
    matches: inPrefix('64:ff9b:1::/48'),
    embedded: (h) => [h[3] >> 8, h[3] & 0xff, h[4] & 0xff, h[5] >> 8],
    unwrap: false,
  },
  { name: '6to4 (2002::/16)', matches: inPrefix('2002::/16'), embedded: (h) => octetsOf(h[1], h[2]), unwrap: false },
  {
    // The client's address is stored inverted (RFC 4380).
    name: 'Teredo (2001::/32)',
    matches: inPrefix('2001::/32'),
    embedded: (h) => octetsOf(h[6] ^ 0xffff, h[7] ^ 0xffff),
    unwrap: false,
  },
  {
    // Interface identifier 0000:5efe or 0200:5efe (either u/g bit) under any prefix (RFC 5214).
    name: 'ISATAP (interface identifier 0:5efe:a.b.c.d)',
    matches: (h) => (h[4] & 0xfcff) === 0 && h[5] === 0x5efe,
    embedded: lastThirtyTwoBits,
    unwrap: false,
  },
];

/**
 * The eight 16-bit groups of an IPv6 address in standard notation (as
 * `net.isIPv6` accepts it, without a zone). Written out rather than left to
 * ipaddr.js, whose parser reads `::a.b.c.d` as IPv4-mapped.
 */
function hextetsOf(address: string): Hextets {
  let text = address;
  const dotted = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, text.length - dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - front.length - back.length).fill(0);
  return [...front, ...fill, ...back];
}

type AddressCheck =
  | { allowed: true; address: string; family: 4 | 6 }
  /** `range` and `normalized` are set when the address was refused for its range only (not for its form). */
  | { allowed: false; reason: string; range?: string; normalized?: string };

/**
 * Classifies an address in standard notation: refused with a reason, or
 * allowed with the address and family to connect to (an IPv4-mapped address
 * is connected to as the IPv4 address that was checked).
 */
function checkAddress(address: string, policy: Pick<SafeHttpPolicy, 'allowLoopback'>): AddressCheck {
  const refuse = (reason: string): AddressCheck => ({ allowed: false, reason });
  if (address.includes('%') && net.isIPv6(address)) {
    return refuse(`the address ${address} carries a zone index; scoped addresses are refused`);
  }
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  if (net.isIPv4(address)) {
    parsed = ipaddr.IPv4.parse(address);
  } else if (net.isIPv6(address)) {
    const hextets = hextetsOf(address);
    parsed = new ipaddr.IPv6(hextets);
    const form = IPV6_FORMS_EMBEDDING_IPV4.find((candidate) => candidate.matches(hextets));
    if (form) {
      const embedded = new ipaddr.IPv4(form.embedded(hextets));
      if (!form.unwrap) {
        return refuse(`the address ${parsed.toString()} is ${form.name}, which embeds the IPv4 address ${embedded.toString()}; IPv6 forms that embed an IPv4 address are refused`);
      }
      parsed = embedded;
    }
  } else {
    return refuse(`"${address}" is not an IP address in standard notation`);
  }
  const range = parsed.range();
  const family = parsed.kind() === 'ipv6' ? 6 : 4;
  if (range === LOOPBACK_RANGE && policy.allowLoopback) return { allowed: true, address: parsed.toString(), family };
  if (range !== PUBLIC_RANGE) return { allowed: false, reason: `the address ${parsed.toString()} is in a non-public range (${range})`, range, normalized: parsed.toNormalizedString() };
  if (family === 6 && !(parsed as ipaddr.IPv6).match(IPV6_GLOBAL_UNICAST)) {
    return refuse(`the address ${parsed.toString()} is in a non-public range (outside global unicast 2000::/3)`);
  }
  return { allowed: true, address: parsed.toString(), family };
}

/** Why an address may not be contacted, or null when it may. */
export function blockedAddressReason(address: string, policy: Pick<SafeHttpPolicy, 'allowLoopback'>): string | null {
  const check = checkAddress(address, policy);
  return check.allowed ? null : check.reason;
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
  const check = checkAddress(address, policy);
  if (check.allowed) return null;
  // Only a refusal for the range is widened: IPv6 forms that embed an IPv4 address stay refused.
  if (!policy.allowPrivateNetwork || check.range === undefined || check.normalized === undefined) return check.reason;
  if (CLOUD_METADATA_ADDRESSES.includes(check.normalized)) {
    return `the address ${address} is a cloud metadata endpoint, refused even for a private-network destination`;
  }
  return PRIVATE_NETWORK_RANGES.has(check.range) ? null : check.reason;
}

/** The address and family to connect to: an IPv4-mapped address is connected to as the IPv4 address that was checked. */
function connectionTarget(address: string): { address: string; family: 4 | 6 } {
  if (!net.isIPv6(address)) return { address, family: 4 };
  const parsed = new ipaddr.IPv6(hextetsOf(address));
  return parsed.isIPv4MappedAddress() ? { address: parsed.toIPv4Address().toString(), family: 4 } : { address: parsed.toString(), family: 6 };
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
  if (isIpLiteral(url)) {
    const reason = addressRefusal(host, policy);
    if (reason) throw new UnsafeUrlError(reason);
  } else {
    // A trailing dot only marks the name as absolute: `intranet.` is still a single label.
    const name = host.endsWith('.') ? host.slice(0, -1) : host;
    const privateNetwork = policy.allowPrivateNetwork === true;
    if (LOCALHOST_NAME.test(name) && !policy.allowLoopback && !privateNetwork) throw new UnsafeUrlError(`the host "${host}" is a loopback name`);
    // A single-label name (a container's service name) resolves through search domains: private network only.
    if (!name.includes('.') && !LOCALHOST_NAME.test(name) && !privateNetwork) throw new UnsafeUrlError(`the host "${host}" is not a fully qualified domain name`);
  }
  return url;
}

/** The host without IPv6 brackets (the WHATWG parser has already normalised IPv4 spellings). */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The WHATWG parser writes every IPv4 host as a dotted quad and every IPv6 host in brackets. */
function isIpLiteral(url: URL): boolean {
  return url.hostname.startsWith('[') || net.isIPv4(url.hostname);
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Checks the URL and resolves its host once. Every resolved address must be
 * allowed; the first one, as checked, is returned to be pinned for the
 * connection (its family is the address's own, not what the resolver said).
 */
export async function resolveSafeTarget(
  raw: string,
  policy: SafeHttpPolicy,
  resolver: Resolver = systemResolver,
): Promise<{ url: URL; address: string; family: 4 | 6 }> {
  const url = checkUrlSyntax(raw, policy);
  const host = hostOf(url);
  if (isIpLiteral(url)) {
    // checkUrlSyntax refused what the policy refuses.
    return { url, ...connectionTarget(host) };
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
  return { url, ...connectionTarget(answers[0].address) };
}

/** A socket lookup that answers with the already checked address and never asks DNS. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options && options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/** Connections kept open per origin (and address); webhook deliveries keep their requests in flight to a receiver within it. */
export const CONNECTIONS_PER_ORIGIN = 32;

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
  agent = new Agent({ connect, keepAliveTimeout: 10_000, connections: CONNECTIONS_PER_ORIGIN });
  agents.set(key, agent);
  if (agents.size > AGENT_CACHE_ENTRIES_MAX) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    void oldest.close().catch(() => undefined);
  }
  return agent;
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
