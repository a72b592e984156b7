/** A scripted `fetch` for unit tests: records each request, answers from a handler. */
export interface Recorded {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
}

export type Answer = { status?: number; body?: unknown; headers?: Record<string, string> } | Error;

export function fakeFetch(handler: (req: Recorded, n: number) => Answer | Promise<Answer>) {
  const calls: Recorded[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const raw = typeof init?.body === 'string' ? init.body : undefined;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const req: Recorded = { url, method: init?.method ?? 'GET', headers, body: raw === undefined ? undefined : JSON.parse(raw) };
    calls.push(req);
    const a = await handler(req, calls.length);
    if (a instanceof Error) throw a;
    const status = a.status ?? 200;
    const body = a.body === undefined || status === 204 ? null : JSON.stringify(a.body);
    return new Response(body, { status, headers: { 'content-type': 'application/json', ...a.headers } });
  };
  return { fetch, calls };
}

export const contact = (id = 1, extra: Record<string, unknown> = {}) => ({
  id,
  name: 'Ada',
  phone: null,
  email: 'ada@example.test',
  lifecycle_stage_id: 1,
  blocked: false,
  created_at: '2026-01-01T00:00:00+00:00',
  updated_at: '2026-01-01T00:00:00+00:00',
  ...extra,
});

/** A sleep that records and returns at once, advancing a fake clock. */
export function fakeTime(start = 1_700_000_000_000) {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
    sleeps,
  };
}

/**
 * Runs a client call, or the first page of a listing (a paginator is awaited
 * by iterating it): what it threw (undefined when nothing), and how many
 * requests `calls` gained meanwhile.
 */
export async function settle(fn: () => unknown, calls: readonly unknown[]): Promise<{ err: unknown; sent: number }> {
  const before = calls.length;
  try {
    const r = fn();
    if (typeof r === 'object' && r !== null && typeof (r as { then?: unknown }).then === 'function') await (r as PromiseLike<unknown>);
    else if (typeof r === 'object' && r !== null && Symbol.asyncIterator in r)
      await (r as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    return { err: undefined, sent: calls.length - before };
  } catch (err) {
    return { err, sent: calls.length - before };
  }
}
