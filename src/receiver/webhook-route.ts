import type { Context } from 'hono';
import type { Config } from '../config.js';
import { parseEnvelope } from '../events/envelope.js';
import type { Logger } from '../log.js';
import { encodeBody, KEPT_HEADERS, type DeliverySink, type StoredDelivery } from '../queue/delivery.js';
import { verify } from '../signature.js';
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
    if (t !== ms) { ms = t; iso = new Date(t).toISOString(); }
    return iso;
  };
}

const SIGNATURE_HELP = (header: string) => `expected header ${header}: sha256=<64 lowercase hex HMAC-SHA256 of the raw body>`;

/**
 * The webhook route: raw bytes → verify → tolerant envelope parse → durable,
 * deduplicated store → answer. No JSON is parsed before the signature holds.
 * A signed delivery is never refused for its content (it is stored; the worker
 * dead-letters what is not a valid event, raw body kept).
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

  const finish = (c: Context, status: 200 | 202 | 401 | 408 | 413 | 503, body: object, report: DeliveryReport) => {
    const line = () => ({ outcome: report.outcome, delivery: report.key, event: report.event, ms: Math.round(report.ms * 10) / 10, bytes: report.bytes });
    if (report.outcome === 'accepted' || report.outcome === 'duplicate' || report.outcome === 'spooled') {
      if (accessLog.isLevelEnabled('info')) accessLog.info(line(), 'delivery');
    } else log.warn({ ...line(), reason: report.reason }, 'delivery refused');
    hooks?.onDelivery?.(report);
    return c.json(body, status);
  };

  return async (c: Context) => {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const refuse = (outcome: DeliveryOutcome, reason: string) => ({ outcome, reason, ms: elapsed() });

    // Under @hono/node-server the Node request is at hand: read it directly
    // (no undici Request, no Web stream). `app.request()` (tests) has no
    // `incoming` and goes through the Web Streams reader with the same rules.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const nodeHeaders: IncomingHttpHeaders | undefined = incoming?.headers;
    const header = nodeHeaders
      ? (name: string): string | undefined => { const v = nodeHeaders[name]; return Array.isArray(v) ? v.join(', ') : v; }
      : (name: string): string | undefined => c.req.header(name);
    const body = incoming
      ? await readNodeBody(incoming, header('content-length'), config.maxBodyBytes, config.bodyTimeoutMs)
      : await readBody(c.req.raw.body, header('content-length'), config.maxBodyBytes, config.bodyTimeoutMs);
    if (!body.ok) {
      if (body.reason === 'too_large') {
        c.header('Connection', 'close');
        return finish(c, 413, { status: 'rejected', error: 'too_large', message: `body exceeds the limit of ${config.maxBodyBytes} bytes (MAX_BODY_BYTES)` }, refuse('too_large', 'too_large'));
      }
      c.header('Connection', 'close');
      return finish(c, 408, { status: 'rejected', error: 'body_timeout', message: `the body did not arrive in full within ${config.bodyTimeoutMs} ms` }, refuse('timeout', body.reason));
    }
    const { bytes } = body;

    const result = verify(config.webhookSecrets, bytes, header(signatureHeader));
    if (!result.ok) {
      return finish(c, 401, {
        status: 'rejected',
        error: 'invalid_signature',
        message: `signature ${result.reason}: ${SIGNATURE_HELP(config.signatureHeader)}`,
      }, { ...refuse('bad_signature', result.reason), bytes: bytes.byteLength });
    }

    // Decode once: the envelope parse and the stored body share the text.
    const text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
    const envelope = parseEnvelope(bytes, text);
    const receivedAt = receivedAtNow();
    const headers: Record<string, string> = {};
    for (const h of KEPT_HEADERS) {
      const v = header(h);
      if (v !== undefined) headers[h] = v;
    }
    const kept = encodeBody(bytes, text);
    const delivery: StoredDelivery = { key: envelope.key, name: envelope.name, receivedAt, secretIndex: result.secretIndex, headers, ...kept };
    const base = { key: envelope.key, event: envelope.name, secretIndex: result.secretIndex, bytes: bytes.byteLength };

    let stored: 'accepted' | 'duplicate' | 'spooled';
    try {
      stored = await sink.put(delivery, 'body' in kept ? bytes : undefined);
    } catch (err) {
      log.error({ err: String(err), delivery: envelope.key }, 'no durable store could take the delivery');
      c.header('Retry-After', retryAfter);
      return finish(c, 503, { status: 'unavailable', message: 'the delivery could not be stored; retry later', delivery: envelope.key }, { ...base, outcome: 'unavailable', ms: elapsed() });
    }
    if (stored !== 'duplicate' && hooks?.onStored) {
      // Node's headers when at hand: `c.req.header()` would build a whole Request just to list them.
      const all = nodeHeaders
        ? Object.fromEntries(Object.entries(nodeHeaders).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]))
        : c.req.header();
      hooks.onStored({ key: envelope.key, bytes, headers: all, receivedAt });
    }
    const status = stored === 'duplicate' ? 200 : 202;
    return finish(c, status, { status: stored === 'duplicate' ? 'duplicate' : 'accepted', delivery: envelope.key }, { ...base, outcome: stored, ms: elapsed() });
  };
}
