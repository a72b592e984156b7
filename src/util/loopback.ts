/** Hostnames of this machine only (a URL's `hostname`: IPv6 in brackets). */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** Whether a URL's hostname is loopback: the only place plain http is allowed for the workspace API (a local sandbox). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}
