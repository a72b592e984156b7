import { HEADERS } from '../spec/index.js';
import { Me } from '../spec/schemas/index.js';
import { DRY_ID_BASE, found, type Body, type DryAnswer, type DryEnv, type Lookup } from './dry-kit.js';
import { decodePath, isRead, matchRoute } from './dry-shapes.js';

/** Header on every answer a dry run made up instead of the API (value `1`). */
export const DRY_RUN_HEADER = 'X-Switchyard-Dry-Run';

/** A write a dry run did not send: the call it would have been, and the status of the answer built for it. */
export interface DryWrite {
  /** The client's operation (`tasks.create`); null for a write the API does not have. */
  op: string | null;
  method: string;
  /** Path below the base URL as it would be sent (segments encoded). */
  path: string;
  /** Query string without `?` ('' when none). */
  query: string;
  /** The JSON body (a body that is not JSON: its text; none: undefined). */
  body: unknown;
  /** The Idempotency-Key it would carry; null when it carries none. */
  idempotencyKey: string | null;
  status: number;
}

/** Options of {@link createDryRun}. */
export interface DryRunOptions {
  /** The client's base URL (`…/api/v1`): paths are taken below it, and reads the answers need go there. */
  baseUrl: string;
  /** The clock of the answers' timestamps (default: now). */
  now?: () => Date;
}

/** One dry run: its fetches share the records and ids they made up. */
export interface DryRun {
  /**
   * A fetch for the API client's transport (`createApiClient({ fetch })`).
   * Reads (GET, HEAD, `POST /contacts/search`) go to the base fetch, except
   * reads of a record this run wrote, answered from memory. Writes are never
   * sent: each is reported to `onWrite` and answered as the API answers a
   * success, in the spec's resource shape, built from the request (and, for
   * a change, the record read first: a missing one answers the API's 404),
   * with dry ids from {@link DRY_ID_BASE} and the header {@link DRY_RUN_HEADER}.
   */
  fetch(onWrite?: (write: DryWrite) => void): typeof fetch;
}

/** Rate-limit headers of a read made for a write, passed on so the client's limiter sees them. */
const RATE_HEADERS = [HEADERS.rateLimitLimit, HEADERS.rateLimitRemaining, HEADERS.quotaLimit, HEADERS.quotaRemaining, HEADERS.quotaReset];

function respond(status: number, body: unknown, from?: Headers): Response {
  const headers = new Headers({ [DRY_RUN_HEADER]: '1' });
  for (const name of RATE_HEADERS) {
    const v = from?.get(name);
    if (v) headers.set(name, v);
  }
  if (status === 204 || body === undefined) return new Response(null, { status, headers });
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(body), { status, headers });
}

function parseBody(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const isBody = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Creates a dry run whose reads go to `base`. */
export function createDryRun(base: typeof fetch, opts: DryRunOptions): DryRun {
  const root = new URL(opts.baseUrl);
  const basePath = root.pathname.replace(/\/+$/, '');
  const now = opts.now ?? (() => new Date());
  const records = new Map<string, unknown>();
  let lastId = DRY_ID_BASE;
  let teammate: number | null | undefined;

  const ownAnswer = (path: string): Lookup | undefined => {
    if (!records.has(path)) return undefined;
    const r = records.get(path);
    return r === null
      ? { status: 404, json: { message: 'Not found (deleted earlier in this dry run).' } }
      : { status: 200, json: { data: r } };
  };

  /** What the builders of one write use; reads carry the write's Authorization and signal. */
  const envFor = (sent: Headers, signal: AbortSignal | null | undefined): DryEnv & { seen?: Headers } => {
    const env: DryEnv & { seen?: Headers } = {
      now: () => now().toISOString(),
      nextId: () => ++lastId,
      own: (path) => records.get(path),
      remember: (path, record) => void records.set(path, record),
      async read(path, o = {}) {
        const mine = o.body === undefined ? ownAnswer(path) : undefined;
        if (mine) return mine;
        const url = new URL(`${basePath}${path.split('/').map(encodeURIComponent).join('/')}`, root);
        for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
        const headers = new Headers({ accept: 'application/json' });
        const auth = sent.get('authorization');
        if (auth) headers.set('authorization', auth);
        if (o.body !== undefined) headers.set('content-type', 'application/json');
        try {
          const res = await base(url.toString(), {
            method: o.body === undefined ? 'GET' : 'POST',
            headers,
            ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
            ...(signal ? { signal } : {}),
          });
          env.seen = res.headers;
          return { status: res.status, json: parseBody(await res.text()), headers: res.headers };
        } catch (err) {
          if (signal?.aborted) throw err;
          return { status: 0, json: undefined };
        }
      },
      async teammateId() {
        if (teammate === undefined) {
          const l = await env.read('/me');
          const me = found(l, Me);
          if (me) teammate = me.user.id;
          else if (l.status >= 400 && l.status < 500 && l.status !== 429) teammate = null;
        }
        return teammate ?? null;
      },
    };
    return env;
  };

  return {
    fetch: (onWrite) => async (input, init) => {
      const req = input instanceof Request ? input : undefined;
      const url = new URL(req ? req.url : input instanceof URL ? input.href : input);
      const method = (init?.method ?? req?.method ?? 'GET').toUpperCase();
      const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) || '/' : url.pathname;
      if (isRead(method, path)) {
        const mine = method === 'GET' ? ownAnswer(decodePath(path)) : undefined;
        return mine ? respond(mine.status, mine.json) : base(input, init);
      }
      const sent = new Headers(init?.headers ?? req?.headers);
      const signal = init?.signal ?? req?.signal;
      const body = parseBody(typeof init?.body === 'string' ? init.body : undefined);
      const hit = matchRoute(method, path);
      const env = envFor(sent, signal);
      let ans: DryAnswer;
      try {
        ans = hit
          ? await hit.route.answer(hit.params, isBody(body) ? body : {}, env)
          : { status: 400, body: { message: `dry run: the API has no ${method} ${path}; not sent, and no answer can be built for it` } };
      } catch (err) {
        if (signal?.aborted) throw err;
        ans = {
          status: 400,
          body: {
            message: `dry run: no answer could be built for ${method} ${path} (${(err as Error)?.message ?? String(err)}); not sent`,
          },
        };
      }
      onWrite?.({
        op: hit?.route.op ?? null,
        method,
        path,
        query: url.search.slice(1),
        body,
        idempotencyKey: sent.get(HEADERS.idempotencyKey),
        status: ans.status,
      });
      return respond(ans.status, ans.body, env.seen);
    },
  };
}

/** Body keys whose values are secrets: never printed. */
const SECRET_KEY = /^(authorization|token|access_token|api_token|api_key|secret|secrets|password|signature)$/i;

/** A request body fit to print: values of secret-named keys (at any depth) become `[redacted]`. */
export function printableBody(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(printableBody);
  if (!isBody(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_KEY.test(k) ? '[redacted]' : printableBody(x)]));
}

/** One line for a write a dry run did not send: `dry POST /tasks  Idempotency-Key: …  {"title":…}`. */
export function describeDryWrite(w: DryWrite): string {
  const key = w.idempotencyKey === null ? 'no Idempotency-Key' : `Idempotency-Key: ${w.idempotencyKey}`;
  const body = w.body === undefined ? '' : `  ${JSON.stringify(printableBody(w.body))}`;
  return `dry ${w.method} ${w.path}${w.query ? `?${w.query}` : ''}  ${key}${body}`;
}
