import type { RedisClient } from '../redis/index.js';

/**
 * The members of the time index (`<prefix>:hist:index`), newest first, received at or after `since` (ms), one page
 * at a time. Paged by score rather than by offset, so each page costs O(log N + page) however deep the scan goes
 * (an offset is walked again on every page), and deliveries indexed while it runs, newer than where it started,
 * shift nothing: each member is read once. Ties (one ms) are stepped over by counting those already read.
 */
export async function* indexPages(redis: RedisClient, index: string, since: number | undefined, page: number): AsyncGenerator<string[]> {
  let max = '+inf';
  let skip = 0;
  const min = since === undefined ? '-inf' : String(since);
  for (;;) {
    const flat = await redis.zrevrangebyscore(index, max, min, 'WITHSCORES', 'LIMIT', skip, page);
    const members: string[] = [];
    for (let i = 0; i < flat.length; i += 2) members.push(flat[i] as string);
    if (members.length === 0) return;
    yield members;
    if (members.length < page) return;
    const last = flat[flat.length - 1] as string;
    let tied = 0;
    for (let i = flat.length - 1; i >= 1 && flat[i] === last; i -= 2) tied++;
    // A page all of one score (the boundary's): the next starts after it; else after the tied ones at its end.
    skip = last === max ? skip + members.length : tied;
    max = last;
  }
}
