/** One API call as the request log keeps it (never the raw token: only its label and hash). */
export interface LoggedRequest {
  seq: number;
  time: string;
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  idempotency_key: string | null;
  token: { label: string | null; hash: string } | null;
  status: number;
  replay: boolean;
  duration_ms: number;
}

/** Filter of `GET /_sandbox/requests`: every field sent must match. */
export interface RequestFilter {
  method?: string;
  /** Glob over the path below /api/v1 (`*` matches anything), e.g. `/contacts*`. */
  path?: string;
  status?: number;
  token?: string;
  idempotency_key?: string;
}

/** Glob with `*` wildcards -> anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

/** Bounded in-memory log of API calls, newest last, for tests to assert on writes. */
export class RequestLog {
  private entries: LoggedRequest[] = [];
  private seq = 0;
  constructor(private readonly max = 5000) {}

  add(entry: Omit<LoggedRequest, 'seq'>): void {
    this.entries.push({ ...entry, seq: ++this.seq });
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
  }

  list(filter: RequestFilter = {}): LoggedRequest[] {
    const path = filter.path ? globToRegExp(filter.path) : null;
    return this.entries.filter(
      (e) =>
        (!filter.method || e.method === filter.method.toUpperCase()) &&
        (!path || path.test(e.path)) &&
        (filter.status === undefined || e.status === filter.status) &&
        (!filter.token || e.token?.label === filter.token || e.token?.hash === filter.token) &&
        (!filter.idempotency_key || e.idempotency_key === filter.idempotency_key),
    );
  }

  clear(): void {
    this.entries = [];
  }
}
