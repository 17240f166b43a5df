/**
 * Test fixture: address forms the webhook destination filter must refuse,
 * each as a tenant could write it in a URL and as a resolver could answer it
 * for a host name. Shared by the safe-http tests and the webhook destination
 * tests (create, update, and delivery after a DNS change).
 */
export interface BlockedAddressForm {
  label: string;
  /** The receiver URL with the form as its host. */
  url: string;
  /** A resolver's answer for a host name, as Node's resolver writes it (or an odd spelling another resolver might return). */
  answer: string;
  /** What the refusal of the URL must name. */
  reason: RegExp;
  /** What the refusal of the resolver's answer must name, when it differs from `reason`. */
  answerReason?: RegExp;
}

const LOOPBACK = /non-public range \(loopback\)/;
const LINK_LOCAL = /non-public range \(linkLocal\)/;
const PRIVATE = /non-public range \(private\)/;
const UNSPECIFIED = /non-public range \(unspecified\)/;
const RESERVED = /non-public range \(reserved\)/;
const NOT_STANDARD = /not an IP address in standard notation/;

export const BLOCKED_ADDRESS_FORMS: readonly BlockedAddressForm[] = [
  // IPv4-compatible IPv6 (::/96), refused whatever it embeds. Node's resolver writes these as ::a.b.c.d.
  { label: 'IPv4-compatible loopback, dotted, with a port', url: 'https://[::127.0.0.1]:8443/h', answer: '::127.0.0.1', reason: /IPv4-compatible IPv6 \(::\/96\), which embeds the IPv4 address 127\.0\.0\.1/ },
  { label: 'IPv4-compatible loopback, hex', url: 'https://[::7f00:1]/', answer: '::7f00:1', reason: /IPv4-compatible.*127\.0\.0\.1/ },
  { label: 'IPv4-compatible private', url: 'https://[::10.0.0.1]/', answer: '::10.0.0.1', reason: /IPv4-compatible.*10\.0\.0\.1/ },
  { label: 'IPv4-compatible metadata address', url: 'https://[::169.254.169.254]/latest/meta-data/', answer: '::169.254.169.254', reason: /IPv4-compatible.*169\.254\.169\.254/ },
  { label: 'IPv4-compatible private, uncompressed', url: 'https://[0:0:0:0:0:0:c0a8:101]/', answer: '0:0:0:0:0:0:c0a8:101', reason: /IPv4-compatible.*192\.168\.1\.1/ },
  { label: 'IPv4-compatible carrier-grade NAT', url: 'https://[::100.64.0.1]/', answer: '::6440:1', reason: /IPv4-compatible.*100\.64\.0\.1/ },
  { label: 'IPv4-compatible public (refused too)', url: 'https://[::8.8.8.8]/', answer: '::8.8.8.8', reason: /IPv4-compatible.*8\.8\.8\.8/ },
  { label: 'IPv4-compatible ::2', url: 'https://[::2]/', answer: '::2', reason: /IPv4-compatible.*0\.0\.0\.2/ },
  // IPv4-mapped IPv6 (::ffff:0:0/96), unwrapped and checked as IPv4.
  { label: 'IPv4-mapped loopback', url: 'https://[::ffff:127.0.0.1]/', answer: '::ffff:127.0.0.1', reason: LOOPBACK },
  { label: 'IPv4-mapped metadata address, hex', url: 'https://[::ffff:a9fe:a9fe]/', answer: '::ffff:a9fe:a9fe', reason: LINK_LOCAL },
  { label: 'IPv4-mapped private, uncompressed', url: 'https://[0:0:0:0:0:ffff:10.1.2.3]/', answer: '0:0:0:0:0:ffff:a01:203', reason: PRIVATE },
  { label: 'IPv4-mapped unspecified', url: 'https://[::ffff:0.0.0.0]/', answer: '::ffff:0.0.0.0', reason: UNSPECIFIED },
  // IPv4-translated IPv6 (::ffff:0:0:0/96).
  { label: 'IPv4-translated loopback', url: 'https://[::ffff:0:127.0.0.1]/', answer: '::ffff:0:7f00:1', reason: /IPv4-translated.*127\.0\.0\.1/ },
  { label: 'IPv4-translated public (refused too)', url: 'https://[::ffff:0:8.8.8.8]/', answer: '::ffff:0:808:808', reason: /IPv4-translated.*8\.8\.8\.8/ },
  // NAT64.
  { label: 'NAT64 well-known prefix, loopback', url: 'https://[64:ff9b::127.0.0.1]/', answer: '64:ff9b::7f00:1', reason: /NAT64.*64:ff9b::\/96.*127\.0\.0\.1/ },
  { label: 'NAT64 well-known prefix, metadata address', url: 'https://[64:ff9b::a9fe:a9fe]/', answer: '64:ff9b::a9fe:a9fe', reason: /NAT64.*169\.254\.169\.254/ },
  { label: 'NAT64 well-known prefix, public (refused too)', url: 'https://[64:ff9b::8.8.8.8]/', answer: '64:ff9b::808:808', reason: /NAT64.*8\.8\.8\.8/ },
  { label: 'NAT64 local-use prefix, private', url: 'https://[64:ff9b:1:a00:0:100::]/', answer: '64:ff9b:1:a00:0:100::', reason: /NAT64 under the local-use prefix.*10\.0\.0\.1/ },
  // 6to4 (2002::/16): the IPv4 address is in bits 16-48.
  { label: '6to4 loopback', url: 'https://[2002:7f00:1::]/', answer: '2002:7f00:1::', reason: /6to4.*127\.0\.0\.1/ },
  { label: '6to4 metadata address', url: 'https://[2002:a9fe:a9fe::1]/', answer: '2002:a9fe:a9fe::1', reason: /6to4.*169\.254\.169\.254/ },
  { label: '6to4 private with a subnet', url: 'https://[2002:c0a8:101:1::1]/', answer: '2002:c0a8:101:1::1', reason: /6to4.*192\.168\.1\.1/ },
  { label: '6to4 public (refused too)', url: 'https://[2002:808:808::1]/', answer: '2002:808:808::1', reason: /6to4.*8\.8\.8\.8/ },
  // Teredo (2001::/32): the client address is stored inverted in the last 32 bits.
  { label: 'Teredo with a loopback client', url: 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', answer: '2001:0:4136:e378:8000:63bf:80ff:fffe', reason: /Teredo.*127\.0\.0\.1/ },
  { label: 'Teredo with a private client', url: 'https://[2001::f5ff:fffe]/', answer: '2001::f5ff:fffe', reason: /Teredo.*10\.0\.0\.1/ },
  // ISATAP: interface identifier 0:5efe:a.b.c.d under any prefix.
  { label: 'ISATAP with the metadata address', url: 'https://[2a00:1450::5efe:a9fe:a9fe]/', answer: '2a00:1450::5efe:a9fe:a9fe', reason: /ISATAP.*169\.254\.169\.254/ },
  { label: 'ISATAP (u bit set) with loopback', url: 'https://[2a00:1450::200:5efe:127.0.0.1]/', answer: '2a00:1450::200:5efe:7f00:1', reason: /ISATAP.*127\.0\.0\.1/ },
  // Other non-public IPv6.
  { label: 'IPv6 unspecified', url: 'https://[::]/', answer: '::', reason: UNSPECIFIED },
  { label: 'IPv6 loopback', url: 'https://[::1]/', answer: '::1', reason: LOOPBACK },
  { label: 'IPv6 loopback, uncompressed', url: 'https://[0:0:0:0:0:0:0:1]/', answer: '0:0:0:0:0:0:0:1', reason: LOOPBACK },
  { label: 'IPv6 link-local (with a zone index when resolved)', url: 'https://[fe80::1]/', answer: 'fe80::1%eth0', reason: LINK_LOCAL, answerReason: /zone index/ },
  { label: 'IPv6 site-local (deprecated)', url: 'https://[fec0::1]/', answer: 'fec0::1', reason: /non-public range \(deprecatedSiteLocal\)/ },
  { label: 'IPv6 unique-local (a cloud metadata address)', url: 'https://[fd00:ec2::254]/', answer: 'fd00:ec2::254', reason: /non-public range \(uniqueLocal\)/ },
  { label: 'IPv6 multicast', url: 'https://[ff02::1]/', answer: 'ff02::1', reason: /non-public range \(multicast\)/ },
  { label: 'IPv6 documentation', url: 'https://[2001:db8::1]/', answer: '2001:db8::1', reason: RESERVED },
  { label: 'IPv6 discard', url: 'https://[100::1]/', answer: '100::1', reason: /non-public range \(discard\)/ },
  { label: 'IPv6 ORCHIDv2', url: 'https://[2001:20::1]/', answer: '2001:20::1', reason: /non-public range \(orchid2\)/ },
  { label: 'IPv6 outside global unicast', url: 'https://[4000::1]/', answer: '4000::1', reason: /outside global unicast 2000::\/3/ },
  // Non-public IPv4.
  { label: 'IPv4 unspecified', url: 'https://0.0.0.0/', answer: '0.0.0.0', reason: UNSPECIFIED },
  { label: 'IPv4 "this network" 0.0.0.0/8', url: 'https://0.1.2.3/', answer: '0.1.2.3', reason: UNSPECIFIED },
  { label: 'IPv4 carrier-grade NAT', url: 'https://100.64.0.1/', answer: '100.64.0.1', reason: /non-public range \(carrierGradeNat\)/ },
  { label: 'IPv4 benchmarking 198.18.0.0/15', url: 'https://198.19.255.1/', answer: '198.19.255.1', reason: RESERVED },
  { label: 'IPv4 reserved 240.0.0.0/4', url: 'https://240.0.0.1/', answer: '240.0.0.1', reason: RESERVED },
  { label: 'IPv4 limited broadcast', url: 'https://255.255.255.255/', answer: '255.255.255.255', reason: /non-public range \(broadcast\)/ },
  { label: 'IPv4 metadata address', url: 'https://169.254.169.254/latest/meta-data/', answer: '169.254.169.254', reason: LINK_LOCAL },
  { label: 'IPv4 protocol assignments 192.0.0.0/24', url: 'https://192.0.0.170/', answer: '192.0.0.170', reason: RESERVED },
  { label: 'IPv4 private 172.16.0.0/12', url: 'https://172.31.255.254/', answer: '172.31.255.254', reason: PRIVATE },
  // IPv4 in odd spellings: the URL parser normalises them; a resolver's answer must be in standard notation.
  { label: 'IPv4 loopback as one decimal number', url: 'https://2130706433/', answer: '2130706433', reason: LOOPBACK, answerReason: NOT_STANDARD },
  { label: 'IPv4 loopback as one hex number', url: 'https://0x7f000001/', answer: '0x7f000001', reason: LOOPBACK, answerReason: NOT_STANDARD },
  { label: 'IPv4 loopback in octal', url: 'https://0177.0.0.1/', answer: '0177.0.0.1', reason: LOOPBACK, answerReason: NOT_STANDARD },
  { label: 'IPv4 private in octal', url: 'https://0300.0250.0.1/', answer: '0300.0250.0.1', reason: PRIVATE, answerReason: NOT_STANDARD },
  { label: 'IPv4 loopback, short form', url: 'https://127.1/', answer: '127.1', reason: LOOPBACK, answerReason: NOT_STANDARD },
  { label: 'IPv4 private, short form', url: 'https://10.1/', answer: '10.1', reason: PRIVATE, answerReason: NOT_STANDARD },
  { label: 'IPv4 metadata address in hex octets', url: 'https://0xa9.0xfe.0xa9.0xfe/', answer: '0xa9.0xfe.0xa9.0xfe', reason: LINK_LOCAL, answerReason: NOT_STANDARD },
  { label: 'IPv4 loopback with a trailing dot', url: 'https://127.0.0.1./', answer: '127.0.0.1.', reason: LOOPBACK, answerReason: NOT_STANDARD },
  { label: 'IPv4 loopback in enclosed digits', url: 'https://①②⑦.0.0.1/', answer: '127.0.0.1', reason: LOOPBACK },
  { label: 'IPv4 loopback percent-encoded', url: 'https://%31%32%37.0.0.1/', answer: '127.0.0.1', reason: LOOPBACK },
];

/** Host names refused by name alone (no address involved). */
export const BLOCKED_NAME_URLS: readonly string[] = [
  'https://localhost/',
  'https://localhost./',
  'https://LOCALHOST./',
  'https://api.localhost/',
  'https://intranet/',
  'https://intranet./',
];
