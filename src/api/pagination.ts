import type { ApiPromise } from './response.js';

/** One cursor page of a collection. */
export interface Page<T> {
  data: T[];
  /** Cursor of the next page; null on the last page. */
  nextCursor: string | null;
  perPage: number;
}

/** Query parameters every collection accepts. */
export interface PageQuery {
  /** 1 to 100 (service default 50). */
  per_page?: number;
  /** Start from this cursor (from `Page.nextCursor`). */
  cursor?: string;
}

/**
 * A collection walk. Nothing is requested until it is iterated.
 *
 * @example
 * for await (const c of api.contacts.list({ label: 'vip' })) console.log(c.name);
 * for await (const page of api.contacts.list().pages()) console.log(page.data.length);
 * const first = await api.contacts.list({ per_page: 10 }).firstPage();
 */
export class Paginator<T> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => ApiPromise<Page<T>>,
    private readonly startCursor?: string,
  ) {}

  /** The first page only (one request). */
  firstPage(): ApiPromise<Page<T>> {
    return this.fetchPage(this.startCursor);
  }

  /** Page at a time, following `meta.next_cursor` until it is null. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor = this.startCursor;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (page.nextCursor === null || page.nextCursor === '') return;
      // A cursor seen before would loop forever; stop rather than spin on the quota.
      if (seen.has(page.nextCursor)) return;
      seen.add(page.nextCursor);
      cursor = page.nextCursor;
    }
  }

  /** Every record of every page, newest first (the service's order). */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Collects up to `limit` records (default: all). */
  async toArray(limit = Infinity): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      if (out.length >= limit) break;
      out.push(item);
    }
    return out;
  }
}
