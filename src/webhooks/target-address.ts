import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which addresses a webhook may not be sent to unless the operator allows private targets:
 * anything that reaches the service's own host or network, or a cloud's metadata service,
 * instead of the integrator's server on the internet.
 */
const FORBIDDEN_V4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, 169.254.169.254 the metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4Number(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function v4Forbidden(address: string): boolean {
  const value = v4Number(address);
  return FORBIDDEN_V4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(v4Number(base) / 2 ** (32 - bits)));
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad !== null) {
    const value = v4Number(quad[1]);
    text = `${text.slice(0, quad.index)}${Math.floor(value / 65_536).toString(16)}:${(value % 65_536).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) => parseInt(group, 16));
}

function v6Forbidden(address: string): boolean {
  const g = v6Groups(address);
  const embeddedV4 = `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  const zeros = (count: number) => g.slice(0, count).every((group) => group === 0);
  if (zeros(8)) return true; // :: unspecified
  if (zeros(7) && g[7] === 1) return true; // ::1 loopback
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d): judged as the IPv4 address they carry.
  if (zeros(5) && g[5] === 0xffff) return v4Forbidden(embeddedV4);
  if (zeros(6)) return v4Forbidden(embeddedV4);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((group) => group === 0)) return v4Forbidden(embeddedV4);
  if ((g[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local (fd00:ec2::254 the AWS metadata service)
  if ((g[0] & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g[0] & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // documentation
  return false;
}

/** True when the address is loopback, private, link-local, a metadata service, unspecified or otherwise not on the internet. */
export function isForbiddenAddress(address: string): boolean {
  if (isIPv4(address)) return v4Forbidden(address);
  if (isIPv6(address)) return v6Forbidden(address);
  // Not an address at all: refuse rather than guess.
  return true;
}
