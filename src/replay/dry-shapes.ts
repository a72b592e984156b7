import { CONTACT_ROUTES } from './dry-contacts.js';
import type { DryRoute } from './dry-kit.js';
import { ORDER_ROUTES } from './dry-orders.js';
import { RECORD_ROUTES } from './dry-records.js';

/**
 * Every write operation of the API (the client's `src/api/resources`), by
 * method and path pattern, with how its dry answer is built. A unit test runs
 * each write of the client against the dry fetch.
 */
export const DRY_ROUTES: readonly DryRoute[] = [...CONTACT_ROUTES, ...RECORD_ROUTES, ...ORDER_ROUTES];

/** Requests that read although their method could write: sent as they are. */
const READ_POSTS: readonly string[] = ['/contacts/search'];

/** Whether a request only reads (GET, HEAD, the contact search): a dry run sends it. */
export const isRead = (method: string, path: string): boolean =>
  method === 'GET' || method === 'HEAD' || (method === 'POST' && READ_POSTS.includes(path));

/** Decodes a path segment; one that is not valid percent-encoding stays as it is. */
function decode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/** A path with each segment decoded (`/contacts/email%3Aa%40b.c` → `/contacts/email:a@b.c`): how a dry run keys records. */
export const decodePath = (path: string): string => path.split('/').map(decode).join('/');

/**
 * The route of a write and its `:name` segments, decoded, or undefined for a
 * write the API does not have. `path` is as sent: segments encoded.
 */
export function matchRoute(method: string, path: string): { route: DryRoute; params: string[] } | undefined {
  const segs = path.split('/');
  for (const route of DRY_ROUTES) {
    if (route.method !== method) continue;
    const pat = route.pattern.split('/');
    if (pat.length !== segs.length) continue;
    const params: string[] = [];
    if (pat.every((p, i) => (p.startsWith(':') ? params.push(decode(segs[i] ?? '')) > 0 : p === segs[i]))) return { route, params };
  }
  return undefined;
}
