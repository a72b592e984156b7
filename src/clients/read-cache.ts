import type { ApiClient } from '../api/index.js';

/** Reads worth sharing between handlers of one delivery (records fetched by id). */
const CACHED_READS = new Set([
  'me',
  'contacts.get',
  'contacts.labels.list',
  'conversations.get',
  'conversations.closingNotes',
  'messages.get',
  'deals.get',
  'orders.get',
  'products.get',
]);
/** Reads that are not cached but must not invalidate the cache either. */
const PLAIN_READS = /(^|\.)(list|search|pages)$/;

/**
 * A short-lived, process-wide cache of enrichment reads (at most `maxEntries`,
 * each for `ttlMs`; writes by other processes are not seen for up to `ttlMs`). Concurrent identical
 * reads share one request and a result is reused for `ttlMs`, so several
 * handlers reading the contact of the same conversation spend one call of the
 * rate limit. It sits above the client, so a cache hit never takes a limiter
 * permit. Any write made through a wrapped client empties the cache, so a
 * handler never reads back something older than its own write.
 */
export class ReadCache {
  private readonly entries = new Map<string, { at: number; value: Promise<unknown> }>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 1_000,
  ) {}

  /** Drops expired entries; if still full, the oldest (Map keeps insertion order). Bounds memory in read-mostly workers. */
  private evict(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (now - e.at >= this.ttlMs) this.entries.delete(k);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Entries held now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  read<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) {
      this.hits++;
      return hit.value as Promise<T>;
    }
    this.misses++;
    const value = load();
    const entry = { at: this.now(), value: value as Promise<unknown> };
    if (this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Wraps a client: cached reads go through the cache, writes clear it. */
  wrap(client: ApiClient): ApiClient {
    const wrapObject = (obj: Record<string, unknown>, path: string): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(obj)) {
        const op = path ? `${path}.${name}` : name;
        if (typeof value === 'function') {
          const fn = value as (...args: unknown[]) => Promise<unknown> & { withResponse?: () => Promise<unknown> };
          if (CACHED_READS.has(op)) {
            out[name] = (...args: unknown[]) => {
              const shared = this.read(`${op}\u0000${JSON.stringify(args)}`, () => fn.apply(obj, args));
              // Keep the ApiPromise shape: `.withResponse()` still works on a fresh call.
              return Object.assign(
                shared.then((v) => v),
                { withResponse: () => fn.apply(obj, args).withResponse?.() },
              );
            };
          } else if (PLAIN_READS.test(op)) {
            out[name] = fn.bind(obj);
          } else {
            out[name] = (...args: unknown[]) => {
              this.clear();
              return fn.apply(obj, args);
            };
          }
        } else if (value && typeof value === 'object' && !Array.isArray(value) && name !== 'rateLimiter') {
          out[name] = wrapObject(value as Record<string, unknown>, op);
        } else {
          out[name] = value;
        }
      }
      return out;
    };
    return wrapObject(client, '') as unknown as ApiClient;
  }
}
