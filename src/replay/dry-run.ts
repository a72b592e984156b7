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

/** The records and ids one dry run made up, shared by its fetches. */
interface DryState {
  /** The fetch reads go to. */
  readonly base: typeof fetch;
  readonly root: URL;
  /** The base URL's path without a trailing slash. */
  readonly basePath: string;
  readonly now: () => Date;
  /** What this run wrote, by path (null: deleted). */
  readonly records: Map<string, unknown>;
  lastId: number;
  /** The token's teammate id once read (null: unknown). */
  teammate: number | null | undefined;
}

/** A builder's environment, with the headers of the last read it made. */
type WriteEnv = DryEnv & { seen?: Headers };

/** Creates a dry run whose reads go to `base`. */
export function createDryRun(base: typeof fetch, opts: DryRunOptions): DryRun {
  const root = new URL(opts.baseUrl);
  const s: DryState = {
    base,
    root,
    basePath: root.pathname.replace(/\/+$/, ''),
    now: opts.now ?? (() => new Date()),
    records: new Map<string, unknown>(),
    lastId: DRY_ID_BASE,
    teammate: undefined,
  };
  return { fetch: (onWrite) => (input, init) => dryFetch(s, onWrite, input, init) };
}

/** This run's own record at `path` as a read's answer (a deleted one: 404); undefined when it wrote none there. */
function ownAnswer(s: DryState, path: string): Lookup | undefined {
  if (!s.records.has(path)) return undefined;
  const r = s.records.get(path);
  return r === null
    ? { status: 404, json: { message: 'Not found (deleted earlier in this dry run).' } }
    : { status: 200, json: { data: r } };
}

/** What the builders of one write use; reads carry the write's Authorization and signal. */
function writeEnv(s: DryState, sent: Headers, signal: AbortSignal | null | undefined): WriteEnv {
  const env: WriteEnv = {
    now: () => s.now().toISOString(),
    nextId: () => ++s.lastId,
    own: (path) => s.records.get(path),
    remember: (path, record) => void s.records.set(path, record),
    read: (path, o = {}) => readForWrite(s, env, { sent, signal }, path, o),
    teammateId: () => teammateOf(s, env),
  };
  return env;
}

/** `env.read`: this run's own record, else a read of the API (status 0 when it did not answer). */
async function readForWrite(
  s: DryState,
  env: WriteEnv,
  write: { sent: Headers; signal: AbortSignal | null | undefined },
  path: string,
  o: { query?: Record<string, string>; body?: unknown },
): Promise<Lookup> {
  const mine = o.body === undefined ? ownAnswer(s, path) : undefined;
  if (mine) return mine;
  const url = new URL(`${s.basePath}${path.split('/').map(encodeURIComponent).join('/')}`, s.root);
  for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
  const headers = new Headers({ accept: 'application/json' });
  const auth = write.sent.get('authorization');
  if (auth) headers.set('authorization', auth);
  if (o.body !== undefined) headers.set('content-type', 'application/json');
  const { signal } = write;
  try {
    const res = await s.base(url.toString(), {
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
}

/** `env.teammateId`: `GET /me` once per run; null when the API refused it. */
async function teammateOf(s: DryState, env: WriteEnv): Promise<number | null> {
  if (s.teammate === undefined) {
    const l = await env.read('/me');
    const me = found(l, Me);
    if (me) s.teammate = me.user.id;
    else if (l.status >= 400 && l.status < 500 && l.status !== 429) s.teammate = null;
  }
  return s.teammate ?? null;
}

/** The dry run's fetch: reads pass through (but for this run's own records); writes are answered here and reported. */
async function dryFetch(
  s: DryState,
  onWrite: ((write: DryWrite) => void) | undefined,
  input: Parameters<typeof fetch>[0],
  init: Parameters<typeof fetch>[1],
): Promise<Response> {
  const req = input instanceof Request ? input : undefined;
  const url = new URL(req ? req.url : input instanceof URL ? input.href : input);
  const method = (init?.method ?? req?.method ?? 'GET').toUpperCase();
  const path = url.pathname.startsWith(s.basePath) ? url.pathname.slice(s.basePath.length) || '/' : url.pathname;
  if (isRead(method, path)) {
    const mine = method === 'GET' ? ownAnswer(s, decodePath(path)) : undefined;
    return mine ? respond(mine.status, mine.json) : s.base(input, init);
  }
  const sent = new Headers(init?.headers ?? req?.headers);
  const signal = init?.signal ?? req?.signal;
  const body = parseBody(typeof init?.body === 'string' ? init.body : undefined);
  const hit = matchRoute(method, path);
  const env = writeEnv(s, sent, signal);
  const ans = await answerWrite(hit, { method, path, body, signal }, env);
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
}

/** The answer built for a write; a 400 saying why when the API has no such write or the builder failed. */
async function answerWrite(
  hit: ReturnType<typeof matchRoute>,
  w: { method: string; path: string; body: unknown; signal: AbortSignal | null | undefined },
  env: WriteEnv,
): Promise<DryAnswer> {
  try {
    return hit
      ? await hit.route.answer(hit.params, isBody(w.body) ? w.body : {}, env)
      : { status: 400, body: { message: `dry run: the API has no ${w.method} ${w.path}; not sent, and no answer can be built for it` } };
  } catch (err) {
    if (w.signal?.aborted) throw err;
    return {
      status: 400,
      body: {
        message: `dry run: no answer could be built for ${w.method} ${w.path} (${(err as Error)?.message ?? String(err)}); not sent`,
      },
    };
  }
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
