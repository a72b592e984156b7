/**
 * A REDIS_URL fit for logs and messages: the password (everything after the
 * first `:` of the user-info) becomes `***`; the user name, hosts, ports and
 * path stay, so an operator can tell which Redis is meant.
 */
export function maskRedisUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_all, scheme: string, info: string) => {
    const colon = info.indexOf(':');
    return colon === -1 ? `${scheme}${info}@` : `${scheme}${info.slice(0, colon)}:***@`;
  });
}
