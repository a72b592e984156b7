/** Base path of the API (spec: Versioning, `{base_url}` ends in `/api/v1`). */
export const API_BASE = '/api/v1';

/** Path below the API base, as fault rules, the request log and idempotency see it. */
export const apiPath = (path: string): string => path.slice(API_BASE.length) || '/';
