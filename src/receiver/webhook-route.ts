import { isUtf8 } from 'node:buffer';
import type { Context, Hono } from 'hono';
import type { Config } from '../config/index.js';
import { parseEnvelope, verify } from '../events/index.js';
import type { Logger } from '../log/index.js';
import { KEPT_HEADERS, type DeliverySink, type StoredDelivery } from '../queue/index.js';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readBody, readNodeBody } from './body.js';
import type { IngestBus, DeliveryOutcome, DeliveryReport, RequestFacts, StoreOutcome, StoringFacts } from '../lifecycle/index.js';

export interface WebhookRouteDeps {
  config: Pick<Config, 'webhookSecrets' | 'signatureHeader' | 'maxBodyBytes' | 'bodyTimeoutMs'>;
  sink: DeliverySink;
  log: Logger;
  /** The ingest stream the route emits on (received, storing, stored, answered); absent: nothing is emitted. */
  ingest?: IngestBus;
  /** The route's path, as the `received` event names it (WEBHOOK_PATH; default `/webhooks`). */
  webhookPath?: string;
  now?: () => Date;
  /** Seconds a sender should wait after a 503. */
  retryAfterSeconds?: number;
}

/**
 * The current time as an ISO string, formatted once per millisecond: under
 * load many deliveries share a millisecond, and formatting a Date is a
 * measurable part of the route's own cost.
 */
function isoNow(): () => string {
  let ms = -1;
  let iso = '';
  return () => {
    const t = Date.now();
    if (t !== ms) {
      ms = t;
      iso = new Date(t).toISOString();
    }
    return iso;
  };
}

/**
 * What the verifier takes (src/events/signature.ts): the prefix and the 64 hex
 * digits in either case (they are the same bytes; the spec writes `sha256=`
 * and does not fix the digits' case), around spaces ignored.
 */
const SIGNATURE_HELP = (header: string) =>
  `expected header ${header}: sha256=<the HMAC-SHA256 of the raw body as 64 hex digits> (prefix and digits in either case)`;

/** A request header: Node's own headers when at hand (names lower-cased, repeats joined), else Hono's. */
function headerOf(c: Context, node: IncomingHttpHeaders | undefined, name: string): string | undefined {
  if (node === undefined) return c.req.header(name);
  const v = node[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The kept headers (KEPT_HEADERS) present on the request. */
function keptHeaders(c: Context, node: IncomingHttpHeaders | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of KEPT_HEADERS) {
    const v = headerOf(c, node, h);
    if (v !== undefined) headers[h] = v;
  }
  return headers;
}

/** Every request header: Node's own when at hand (`c.req.header()` would build a whole Request just to list them). */
function allHeaders(c: Context, node: IncomingHttpHeaders | undefined): Record<string, string> {
  return node ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])) : c.req.header();
}

/** The access-log fields of a report: fixed, non-personal ones only. */
const logLine = (r: DeliveryReport) => ({
  outcome: r.outcome,
  delivery: r.key,
  event: r.event,
  ms: Math.round(r.ms * 10) / 10,
  bytes: r.bytes,
});

type Status = 200 | 202 | 401 | 408 | 413 | 503;

/** What every request of one route shares, built once. */
interface Route {
  readonly config: WebhookRouteDeps['config'];
  readonly sink: DeliverySink;
  readonly log: Logger;
  /** The per-delivery line holds only fixed, non-personal fields, so it skips the redaction walk on the hot path. */
  readonly accessLog: Logger;
  readonly ingest: IngestBus | undefined;
  readonly path: string;
  readonly receivedAtNow: () => string;
  readonly retryAfter: string;
  /** Node lower-cases incoming header names; Headers.get is case-insensitive. */
  readonly signatureHeader: string;
}

/** One request in flight: its context, the Node headers when at hand, the event facts (events on) and its start. */
interface Exchange {
  readonly c: Context;
  readonly node: IncomingHttpHeaders | undefined;
  readonly request: RequestFacts | undefined;
  readonly started: number;
}

/** Logs the answer, emits `answered` and answers. */
function answer(r: Route, x: Exchange, status: Status, body: object, report: DeliveryReport): Response {
  if (report.outcome === 'accepted' || report.outcome === 'duplicate' || report.outcome === 'spooled') {
    if (r.accessLog.isLevelEnabled('info')) r.accessLog.info(logLine(report), 'delivery');
  } else r.log.warn({ ...logLine(report), reason: report.reason }, 'delivery refused');
  if (x.request) r.ingest?.emit({ type: 'answered', request: x.request, ok: true, status, report });
  return x.c.json(body, status);
}

function refused(r: Route, x: Exchange, status: 401 | 408 | 413, body: object, outcome: DeliveryOutcome, reason: string, bytes?: number) {
  const ms = performance.now() - x.started;
  const report: DeliveryReport = bytes === undefined ? { outcome, reason, ms } : { outcome, reason, ms, bytes };
  return answer(r, x, status, body, report);
}

/** A body too large, too slow or cut off: 413 or 408, and the connection closed. */
function refuseBody(r: Route, x: Exchange, reason: 'too_large' | 'timeout' | 'aborted'): Response {
  x.c.header('Connection', 'close');
  const { maxBodyBytes, bodyTimeoutMs } = r.config;
  if (reason === 'too_large') {
    const message = `body exceeds the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES)`;
    return refused(r, x, 413, { status: 'rejected', error: 'too_large', message }, 'too_large', 'too_large');
  }
  const message = `the body did not arrive in full within ${bodyTimeoutMs} ms`;
  return refused(r, x, 408, { status: 'rejected', error: 'body_timeout', message }, 'timeout', reason);
}

/** The durable, deduplicated write: through the ingest stream (storing, stored) when anyone observes it. */
function put(r: Route, x: Exchange, delivery: StoredDelivery, bytes: Uint8Array, raw: Uint8Array | undefined): Promise<StoreOutcome> {
  const ingest = r.ingest;
  if (!ingest || !(ingest.wants('storing') || ingest.wants('stored'))) return r.sink.put(delivery, raw);
  const facts: StoringFacts = {
    key: delivery.key,
    name: delivery.name,
    receivedAt: delivery.receivedAt,
    bytes,
    headers: allHeaders(x.c, x.node),
  };
  return ingest.store(facts, (traceparent) => r.sink.put(traceparent === undefined ? delivery : { ...delivery, traceparent }, raw));
}

/** A verified body: parsed (tolerantly), stored, answered 202 (accepted or spooled), 200 (duplicate) or 503. */
async function store(r: Route, x: Exchange, bytes: Uint8Array, secretIndex: number): Promise<Response> {
  // Decode once: the envelope parse and the stored body share the text.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buf.toString('utf8');
  const { key, name } = parseEnvelope(bytes, text);
  const receivedAt = r.receivedAtNow();
  const headers = keptHeaders(x.c, x.node);
  // UTF-8 bytes are stored as the text (and handed to the sink raw, to be copied, not re-encoded); others as base64.
  const utf8 = isUtf8(buf);
  const delivery: StoredDelivery = utf8
    ? { key, name, receivedAt, secretIndex, headers, body: text }
    : { key, name, receivedAt, secretIndex, headers, bodyBase64: buf.toString('base64') };
  let stored: StoreOutcome;
  try {
    stored = await put(r, x, delivery, bytes, utf8 ? bytes : undefined);
  } catch (err) {
    r.log.error({ err: String(err), delivery: key }, 'no durable store could take the delivery');
    x.c.header('Retry-After', r.retryAfter);
    return answer(
      r,
      x,
      503,
      { status: 'unavailable', message: 'the delivery could not be stored; retry later', delivery: key },
      { outcome: 'unavailable', key, event: name, secretIndex, bytes: bytes.byteLength, ms: performance.now() - x.started },
    );
  }
  const duplicate = stored === 'duplicate';
  return answer(
    r,
    x,
    duplicate ? 200 : 202,
    { status: duplicate ? 'duplicate' : 'accepted', delivery: key },
    { outcome: stored, key, event: name, secretIndex, bytes: bytes.byteLength, ms: performance.now() - x.started },
  );
}

/** One request: read the body within the limits, verify it, store it. */
async function handle(r: Route, c: Context, request: RequestFacts | undefined): Promise<Response> {
  const started = performance.now();
  // Under @hono/node-server the Node request is at hand: read it directly
  // (no undici Request, no Web stream). `app.request()` (tests) has no
  // `incoming` and goes through the Web Streams reader with the same rules.
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const x: Exchange = { c, node: incoming?.headers, request, started };
  const { config } = r;
  const contentLength = headerOf(c, x.node, 'content-length');
  const body = incoming
    ? await readNodeBody(incoming, contentLength, config.maxBodyBytes, config.bodyTimeoutMs)
    : await readBody(c.req.raw.body, contentLength, config.maxBodyBytes, config.bodyTimeoutMs);
  if (!body.ok) return refuseBody(r, x, body.reason);
  const result = verify(config.webhookSecrets, body.bytes, headerOf(c, x.node, r.signatureHeader));
  if (!result.ok) {
    const message = `signature ${result.reason}: ${SIGNATURE_HELP(config.signatureHeader)}`;
    const refusal = { status: 'rejected', error: 'invalid_signature', message };
    return refused(r, x, 401, refusal, 'bad_signature', result.reason, body.bytes.byteLength);
  }
  return store(r, x, body.bytes, result.secretIndex);
}

/**
 * The webhook route: raw bytes → verify → tolerant envelope parse → durable,
 * deduplicated store → answer. No JSON is parsed before the signature holds.
 * A signed delivery is never refused for its content (it is stored; the worker
 * dead-letters what is not a valid event, raw body kept).
 *
 * This runs once per delivery at the receiver's full rate, so it allocates
 * little: one exchange and one report object per request, no closures (but
 * an observed write's); the events of the ingest stream are built only when
 * someone subscribes to them.
 */
export function webhookHandler(deps: WebhookRouteDeps): (c: Context) => Promise<Response> {
  const r: Route = {
    config: deps.config,
    sink: deps.sink,
    log: deps.log,
    accessLog: deps.log.child({}, { redact: { paths: [] } }),
    ingest: deps.ingest,
    path: deps.webhookPath ?? '/webhooks',
    receivedAtNow: deps.now ? () => (deps.now as () => Date)().toISOString() : isoNow(),
    retryAfter: String(deps.retryAfterSeconds ?? 5),
    signatureHeader: deps.config.signatureHeader.toLowerCase(),
  };
  return (c) => {
    if (!r.ingest?.active) return handle(r, c, undefined);
    const request: RequestFacts = { method: c.req.method, path: c.req.path, route: r.path };
    return r.ingest.receipt(request, () => handle(r, c, request));
  };
}

/** One route for every method of a webhook path: POST runs `webhook`, other methods are answered 405. */
export function mountWebhook(app: Hono, path: string, deps: WebhookRouteDeps): void {
  // A POST matches exactly one handler, which Hono runs without composing a chain.
  // With an ingest stream (deps.ingest), the route emits its request's events (received, storing, stored, answered).
  const webhook = webhookHandler({ ...deps, webhookPath: path });
  app.all(path, (c) => {
    if (c.req.method === 'POST') return webhook(c);
    c.header('Allow', 'POST');
    return c.json({ status: 'rejected', error: 'method_not_allowed', message: `use POST for ${path}` }, 405);
  });
}
