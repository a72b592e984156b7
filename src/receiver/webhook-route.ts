import { isUtf8 } from 'node:buffer';
import type { Context } from 'hono';
import type { Config } from '../config/index.js';
import { parseEnvelope, verify } from '../events/index.js';
import type { Logger } from '../log/index.js';
import { KEPT_HEADERS, type DeliverySink, type StoredDelivery } from '../queue/index.js';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readBody, readNodeBody } from './body.js';
import type { DeliveryOutcome, DeliveryReport, ReceiverHooks } from './outcomes.js';

export interface WebhookRouteDeps {
  config: Pick<Config, 'webhookSecrets' | 'signatureHeader' | 'maxBodyBytes' | 'bodyTimeoutMs'>;
  sink: DeliverySink;
  log: Logger;
  hooks?: ReceiverHooks;
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

/** The access-log fields of a report: fixed, non-personal ones only. */
const logLine = (r: DeliveryReport) => ({
  outcome: r.outcome,
  delivery: r.key,
  event: r.event,
  ms: Math.round(r.ms * 10) / 10,
  bytes: r.bytes,
});

/**
 * The webhook route: raw bytes → verify → tolerant envelope parse → durable,
 * deduplicated store → answer. No JSON is parsed before the signature holds.
 * A signed delivery is never refused for its content (it is stored; the worker
 * dead-letters what is not a valid event, raw body kept).
 *
 * This runs once per delivery at the receiver's full rate, so it allocates
 * little: no closures per request, one report object per answer.
 */
export function webhookHandler(deps: WebhookRouteDeps) {
  const { config, sink, log, hooks } = deps;
  // The per-delivery line holds only fixed, non-personal fields (key, event
  // name, outcome, timing), so it skips the redaction walk on the hot path.
  const accessLog = log.child({}, { redact: { paths: [] } });
  const receivedAtNow = deps.now ? () => (deps.now as () => Date)().toISOString() : isoNow();
  const retryAfter = String(deps.retryAfterSeconds ?? 5);
  // Node lower-cases incoming header names; Headers.get is case-insensitive.
  const signatureHeader = config.signatureHeader.toLowerCase();
  const onDelivery = hooks?.onDelivery;
  const onStored = hooks?.onStored;

  const finish = (c: Context, status: 200 | 202 | 401 | 408 | 413 | 503, body: object, report: DeliveryReport) => {
    if (report.outcome === 'accepted' || report.outcome === 'duplicate' || report.outcome === 'spooled') {
      if (accessLog.isLevelEnabled('info')) accessLog.info(logLine(report), 'delivery');
    } else log.warn({ ...logLine(report), reason: report.reason }, 'delivery refused');
    onDelivery?.(report);
    return c.json(body, status);
  };
  const refused = (
    c: Context,
    status: 401 | 408 | 413,
    body: object,
    outcome: DeliveryOutcome,
    reason: string,
    started: number,
    bytes?: number,
  ) => {
    const report: DeliveryReport =
      bytes === undefined
        ? { outcome, reason, ms: performance.now() - started }
        : { outcome, reason, ms: performance.now() - started, bytes };
    return finish(c, status, body, report);
  };

  return async (c: Context) => {
    const started = performance.now();
    // Under @hono/node-server the Node request is at hand: read it directly
    // (no undici Request, no Web stream). `app.request()` (tests) has no
    // `incoming` and goes through the Web Streams reader with the same rules.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const nodeHeaders: IncomingHttpHeaders | undefined = incoming?.headers;
    const contentLength = headerOf(c, nodeHeaders, 'content-length');
    const body = incoming
      ? await readNodeBody(incoming, contentLength, config.maxBodyBytes, config.bodyTimeoutMs)
      : await readBody(c.req.raw.body, contentLength, config.maxBodyBytes, config.bodyTimeoutMs);
    if (!body.ok) {
      c.header('Connection', 'close');
      if (body.reason === 'too_large') {
        return refused(
          c,
          413,
          { status: 'rejected', error: 'too_large', message: `body exceeds the limit of ${config.maxBodyBytes} bytes (MAX_BODY_BYTES)` },
          'too_large',
          'too_large',
          started,
        );
      }
      return refused(
        c,
        408,
        { status: 'rejected', error: 'body_timeout', message: `the body did not arrive in full within ${config.bodyTimeoutMs} ms` },
        'timeout',
        body.reason,
        started,
      );
    }
    const { bytes } = body;

    const result = verify(config.webhookSecrets, bytes, headerOf(c, nodeHeaders, signatureHeader));
    if (!result.ok) {
      return refused(
        c,
        401,
        {
          status: 'rejected',
          error: 'invalid_signature',
          message: `signature ${result.reason}: ${SIGNATURE_HELP(config.signatureHeader)}`,
        },
        'bad_signature',
        result.reason,
        started,
        bytes.byteLength,
      );
    }

    // Decode once: the envelope parse and the stored body share the text.
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const text = buf.toString('utf8');
    const envelope = parseEnvelope(bytes, text);
    const receivedAt = receivedAtNow();
    const headers = keptHeaders(c, nodeHeaders);
    const { key, name } = envelope;
    const secretIndex = result.secretIndex;
    // UTF-8 bytes are stored as the text (and handed to the sink raw, to be copied, not re-encoded); others as base64.
    const utf8 = isUtf8(buf);
    const delivery: StoredDelivery = utf8
      ? { key, name, receivedAt, secretIndex, headers, body: text }
      : { key, name, receivedAt, secretIndex, headers, bodyBase64: buf.toString('base64') };

    let stored: 'accepted' | 'duplicate' | 'spooled';
    try {
      stored = await sink.put(delivery, utf8 ? bytes : undefined);
    } catch (err) {
      log.error({ err: String(err), delivery: key }, 'no durable store could take the delivery');
      c.header('Retry-After', retryAfter);
      return finish(
        c,
        503,
        { status: 'unavailable', message: 'the delivery could not be stored; retry later', delivery: key },
        { outcome: 'unavailable', key, event: name, secretIndex, bytes: bytes.byteLength, ms: performance.now() - started },
      );
    }
    if (stored !== 'duplicate' && onStored) {
      // Node's headers when at hand: `c.req.header()` would build a whole Request just to list them.
      const all = nodeHeaders
        ? Object.fromEntries(Object.entries(nodeHeaders).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]))
        : c.req.header();
      onStored({ key, bytes, headers: all, receivedAt });
    }
    const status = stored === 'duplicate' ? 200 : 202;
    return finish(
      c,
      status,
      { status: stored === 'duplicate' ? 'duplicate' : 'accepted', delivery: key },
      { outcome: stored, key, event: name, secretIndex, bytes: bytes.byteLength, ms: performance.now() - started },
    );
  };
}
