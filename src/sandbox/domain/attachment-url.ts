import ipaddr from 'ipaddr.js';
import { invalid } from '../errors.js';

/**
 * Names that only resolve inside a private network: `localhost` (RFC 6761),
 * `.local` (mDNS, RFC 6762), `.home.arpa` (RFC 8375) and `.internal`.
 */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|home\.arpa)$/i;

/**
 * The IPv4 address an IPv6 one carries in its last 32 bits, when it stands for
 * it: IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`, the first
 * 96 bits zero; deprecated by RFC 4291, yet still routed to the IPv4 address
 * by some stacks). ipaddr.js has no range for the latter and calls it unicast,
 * and the URL parser writes `[::127.0.0.1]` as `[::7f00:1]`.
 */
function embeddedIpv4(addr: ipaddr.IPv6): ipaddr.IPv4 | null {
  const mapped = addr.range() === 'ipv4Mapped';
  const compatible = addr.parts.slice(0, 6).every((part) => part === 0);
  return mapped || compatible ? new ipaddr.IPv4(addr.toByteArray().slice(12)) : null;
}

/** Whether an address literal is anything but global unicast (for IPv6 carrying an IPv4 address, that address's range). */
function isPrivateAddress(literal: string): boolean {
  const addr = ipaddr.parse(literal);
  if (addr.kind() === 'ipv4') return addr.range() !== 'unicast';
  const v6 = addr as ipaddr.IPv6;
  const v4 = embeddedIpv4(v6);
  return (v4 ?? v6).range() !== 'unicast';
}

/**
 * Whether a URL's host points inside a private network. An address literal is
 * judged by the IANA special-purpose tables of ipaddr.js: anything other than
 * global unicast (loopback, RFC 1918, carrier-grade NAT, link-local, unique
 * local, multicast, `0.0.0.0/8`, broadcast, documentation, NAT64, 6to4,
 * Teredo…) is private; an IPv4-mapped or IPv4-compatible IPv6 address counts
 * as its IPv4 address (so `::` and `::1` are `0.0.0.0/8`, private either way).
 * A name is private when it is one of the names above or a single
 * label (`http://intranet/`, resolved through a local search domain). The
 * sandbox resolves no names, so a public name that resolves to a private
 * address is not caught.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (ipaddr.isValid(host)) return isPrivateAddress(host);
  return !host.includes('.') || PRIVATE_NAME.test(host);
}

/** Spec: the attachment URL must be a public http(s) address; one inside a private network is refused (422). */
export function checkAttachmentUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', 'must be an http(s) URL');
  if (isPrivateHost(url.hostname)) throw invalid('url', `must be a public address; ${url.hostname} is inside a private network`);
  return url;
}
