import ipaddr from 'ipaddr.js';
import { invalid } from '../errors.js';

/**
 * Names that only resolve inside a private network: `localhost` (RFC 6761),
 * `.local` (mDNS, RFC 6762), `.home.arpa` (RFC 8375) and `.internal`.
 */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|home\.arpa)$/i;

/**
 * Whether a URL's host points inside a private network. An address literal is
 * judged by the IANA special-purpose tables of ipaddr.js: anything other than
 * global unicast (loopback, RFC 1918, carrier-grade NAT, link-local, unique
 * local, multicast, `0.0.0.0/8`, broadcast, documentation, NAT64, 6to4,
 * Teredo…) is private; an IPv4-mapped IPv6 address counts as its IPv4
 * address. A name is private when it is one of the names above or a single
 * label (`http://intranet/`, resolved through a local search domain). The
 * sandbox resolves no names, so a public name that resolves to a private
 * address is not caught.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (ipaddr.isValid(host)) return ipaddr.process(host).range() !== 'unicast';
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
