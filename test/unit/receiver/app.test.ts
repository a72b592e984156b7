import { request as httpRequest } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { createReceiverApp } from '../../../src/receiver/app.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import type { DeliveryReport, IngestEvent } from '../../../src/lifecycle/ingest-events.js';
import type { DeliverySink } from '../../../src/queue/delivery.js';
import { readBody, readNodeBody } from '../../../src/receiver/body.js';
import { listen } from '../../../src/runtime/http.js';
import { sign } from '../../../src/events/signature.js';

/** An in-memory sink: the route's contract with storage, not a Redis stand-in. */
function memorySink(fail = false) {
  const seen = new Map<string, StoredDelivery>();
  const sink: DeliverySink = {
    put: async (d) => {
      if (fail) throw new Error('redis down');
      if (seen.has(d.key)) return 'duplicate';
      seen.set(d.key, d);
      return 'accepted';
    },
  };
  return { sink, seen };
}

function makeApp(opts: { fail?: boolean; max?: number } = {}) {
  const { sink, seen } = memorySink(opts.fail);
  const reports: DeliveryReport[] = [];
  const logs: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write(c, _e, cb) {
        logs.push(String(c));
        cb();
      },
    }),
  });
  const app = createReceiverApp({
    webhookPath: '/webhooks',
    config: {
      webhookSecrets: ['current', 'previous'],
      signatureHeader: 'x-service-signature',
      maxBodyBytes: opts.max ?? 1024,
      bodyTimeoutMs: 1000,
    },
    sink,
    log,
    ingest: new IngestBus().subscribe({ answered: (e) => (e.ok ? reports.push(e.report) : undefined) }),
    readiness: async () => ({ ready: true, details: {} }),
  });
  return { app, seen, reports, logs };
}

const post = (app: ReturnType<typeof makeApp>['app'], body: string | Uint8Array, headers: Record<string, string> = {}) =>
  app.request('/webhooks', { method: 'POST', body, headers });

describe('webhook route', () => {
  const body = '{"id":"evt_1","event":"message.received","created_at":"2026-01-01T00:00:00Z","data":{"id":1}}';

  it('accepts a signed delivery with 202, then answers 200 duplicate for the same bytes', async () => {
    const { app, seen, reports } = makeApp();
    const r1 = await post(app, body, { 'x-service-signature': sign('current', body), 'content-type': 'application/json' });
    expect(r1.status).toBe(202);
    expect(await r1.json()).toEqual({ status: 'accepted', delivery: 'evt_1' });
    const r2 = await post(app, body, { 'x-service-signature': sign('current', body) });
    expect(r2.status).toBe(200);
    expect(await r2.json()).toEqual({ status: 'duplicate', delivery: 'evt_1' });
    expect(seen.get('evt_1')?.body).toBe(body);
    expect(seen.get('evt_1')?.headers['content-type']).toBe('application/json');
    expect(reports.map((r) => r.outcome)).toEqual(['accepted', 'duplicate']);
  });

  it('records which secret verified (rotation)', async () => {
    const { app, reports } = makeApp();
    await post(app, body, { 'x-service-signature': sign('previous', body) });
    expect(reports[0]).toMatchObject({ outcome: 'accepted', secretIndex: 1 });
  });

  it.each([
    ['missing', {}],
    ['malformed', { 'x-service-signature': 'sha256=zz' }],
    ['wrong secret', { 'x-service-signature': sign('other', body) }],
  ])('answers 401 for a %s signature and stores nothing', async (_label, headers) => {
    const { app, seen } = makeApp();
    const r = await post(app, body, headers);
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_signature');
    expect(seen.size).toBe(0);
  });

  it('says the signature rule the verifier applies: upper-case SHA256=<HEX> is taken, and the 401 asks for no other case', async () => {
    const { app } = makeApp();
    const upper = sign('current', body).toUpperCase();
    expect(upper.startsWith('SHA256=')).toBe(true);
    expect((await post(app, body, { 'x-service-signature': upper })).status).toBe(202);
    const r = await post(app, body, { 'x-service-signature': 'sha256=zz' });
    const { message } = (await r.json()) as { message: string };
    expect(message).toBe(
      'signature malformed: expected header x-service-signature: sha256=<the HMAC-SHA256 of the raw body as 64 hex digits> (prefix and digits in either case)',
    );
    expect(message).not.toMatch(/lower/i);
  });

  it('answers 401 when one byte of the body changed', async () => {
    const { app } = makeApp();
    const r = await post(app, body.replace('evt_1', 'evt_2'), { 'x-service-signature': sign('current', body) });
    expect(r.status).toBe(401);
  });

  it('accepts and keeps a signed delivery whatever its content (bad JSON, unknown event, binary)', async () => {
    const { app, seen } = makeApp();
    const binary = Uint8Array.from([0xff, 0xfe, 0x00, 0x80]);
    for (const b of ['not json', '{"event":"no.such","data":{}}', binary]) {
      const r = await post(app, b, { 'x-service-signature': sign('current', b) });
      expect(r.status).toBe(202);
    }
    expect(seen.size).toBe(3);
    const stored = [...seen.values()].find((d) => d.bodyBase64 !== undefined);
    expect(Buffer.from(stored?.bodyBase64 ?? '', 'base64')).toEqual(Buffer.from(binary));
  });

  it('answers 413 over MAX_BODY_BYTES', async () => {
    const { app, seen } = makeApp({ max: 100 });
    const big = 'x'.repeat(101);
    const r = await post(app, big, { 'x-service-signature': sign('current', big) });
    expect(r.status).toBe(413);
    expect(seen.size).toBe(0);
  });

  it('answers 503 with Retry-After when the sink cannot store', async () => {
    const { app } = makeApp({ fail: true });
    const r = await post(app, body, { 'x-service-signature': sign('current', body) });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers 405 with Allow for other methods', async () => {
    const { app } = makeApp();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await app.request('/webhooks', { method });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it('logs one line per delivery without secrets or signatures', async () => {
    const { app, logs } = makeApp();
    const sig = sign('current', body);
    await post(app, body, { 'x-service-signature': sig });
    const out = logs.join('');
    expect(out).toContain('"outcome":"accepted"');
    expect(out).not.toContain('current');
    expect(out).not.toContain(sig.slice(7));
  });
});

describe('readBody', () => {
  const stream = (chunks: Uint8Array[], delayMs = 0) =>
    new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        const next = chunks.shift();
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        if (next) ctrl.enqueue(next);
        else ctrl.close();
      },
    });

  it('refuses a declared length over the limit without reading', async () => {
    let pulled = 0;
    const s = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        pulled++;
        ctrl.enqueue(new Uint8Array(10));
      },
    });
    expect(await readBody(s, '5000', 100, 1000)).toEqual({ ok: false, reason: 'too_large' });
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('cuts off a chunked body as soon as it passes the limit', async () => {
    let pulled = 0;
    const s = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        pulled++;
        ctrl.enqueue(new Uint8Array(64));
      },
    });
    expect(await readBody(s, undefined, 100, 1000)).toEqual({ ok: false, reason: 'too_large' });
    expect(pulled).toBeLessThanOrEqual(3);
  });

  it('times out a slow body', async () => {
    const r = await readBody(stream([new Uint8Array(1), new Uint8Array(1)], 200), undefined, 100, 50);
    expect(r).toEqual({ ok: false, reason: 'timeout' });
  });

  it('joins chunks exactly', async () => {
    const r = await readBody(stream([Uint8Array.of(1, 2), Uint8Array.of(3)]), undefined, 100, 1000);
    expect(r.ok && Array.from(r.bytes)).toEqual([1, 2, 3]);
  });
});

describe('readNodeBody (the Node IncomingMessage path under @hono/node-server)', () => {
  it('refuses a declared length over the limit without reading', async () => {
    let pulled = 0;
    const s = new Readable({
      read() {
        pulled++;
        this.push(Buffer.alloc(10));
      },
    });
    expect(await readNodeBody(s, '5000', 100, 1000)).toEqual({ ok: false, reason: 'too_large' });
    expect(pulled).toBe(0);
  });

  it('cuts off a chunked body as soon as it passes the limit, and stops reading', async () => {
    let pulled = 0;
    const s = new Readable({
      highWaterMark: 64,
      read() {
        pulled++;
        this.push(Buffer.alloc(64));
      },
    });
    expect(await readNodeBody(s, undefined, 100, 1000)).toEqual({ ok: false, reason: 'too_large' });
    const after = pulled;
    await new Promise((r) => setTimeout(r, 20));
    expect(s.isPaused()).toBe(true);
    expect(pulled).toBeLessThanOrEqual(after + 2);
  });

  it('times out a slow body', async () => {
    const s = new Readable({
      read() {
        /* never ends */
      },
    });
    s.push(Buffer.of(1));
    expect(await readNodeBody(s, undefined, 100, 50)).toEqual({ ok: false, reason: 'timeout' });
  });

  it('takes a body whose declared bytes are all buffered at once, without waiting for the stream to end', async () => {
    // The stream never ends: only the fast path can answer before the 50 ms timeout.
    const s = new Readable({
      read() {
        /* the end is still to come */
      },
    });
    s.push(Buffer.from('{"a":1}'));
    const r = await readNodeBody(s, '7', 100, 50);
    expect(r.ok && Buffer.from(r.bytes).toString()).toBe('{"a":1}');
    // Fewer bytes buffered than declared: streamed, so it waits (here until the timeout).
    const partial = new Readable({
      read() {
        /* rest never comes */
      },
    });
    partial.push(Buffer.from('{"a"'));
    expect(await readNodeBody(partial, '7', 100, 50)).toEqual({ ok: false, reason: 'timeout' });
  });

  it('reports a body whose stream failed as aborted', async () => {
    const s = new Readable({
      read() {
        /* pending */
      },
    });
    setTimeout(() => s.destroy(new Error('ECONNRESET')), 5);
    expect(await readNodeBody(s, undefined, 100, 1000)).toEqual({ ok: false, reason: 'aborted' });
  });

  it('joins chunks exactly, and reads an empty body', async () => {
    const r = await readNodeBody(Readable.from([Buffer.of(1, 2), Buffer.of(3)]), undefined, 100, 1000);
    expect(r.ok && Array.from(r.bytes)).toEqual([1, 2, 3]);
    const e = await readNodeBody(Readable.from([]), '0', 100, 1000);
    expect(e.ok && e.bytes.byteLength).toBe(0);
  });
});

describe('webhook route over a real @hono/node-server socket', () => {
  const body = '{"id":"evt_http","event":"message.received","created_at":"2026-01-01T00:00:00Z","data":{"id":1}}';

  /** Sends a request with the body in the given chunks (chunked encoding unless a length is set). */
  function send(
    url: string,
    chunks: (string | Buffer)[],
    headers: Record<string, string>,
    gapMs = 0,
  ): Promise<{ status: number; body: string; connection: string | undefined }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${url}/webhooks`, { method: 'POST', headers }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }));
      });
      req.on('error', reject);
      void (async () => {
        for (const c of chunks) {
          if (req.destroyed) return;
          req.write(c);
          if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
        }
        if (!req.destroyed) req.end();
      })();
    });
  }

  it('202 then 200 duplicate, 401 on a changed byte, 413 for a chunked body over the limit, 408 for a slow body', async () => {
    const { sink, seen } = memorySink();
    const logs: string[] = [];
    const log = createLogger({
      level: 'info',
      destination: new Writable({
        write(c, _e, cb) {
          logs.push(String(c));
          cb();
        },
      }),
    });
    const app = createReceiverApp({
      webhookPath: '/webhooks',
      config: { webhookSecrets: ['current'], signatureHeader: 'X-Service-Signature', maxBodyBytes: 1024, bodyTimeoutMs: 200 },
      sink,
      log,
      readiness: async () => ({ ready: true, details: {} }),
    });
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    try {
      const sig = sign('current', body);
      const half = Math.floor(body.length / 2);
      const first = await send(server.url, [body.slice(0, half), body.slice(half)], {
        'x-service-signature': sig,
        'content-type': 'application/json',
        'x-request-id': 'r1',
      });
      expect(first.status).toBe(202);
      expect(JSON.parse(first.body)).toEqual({ status: 'accepted', delivery: 'evt_http' });
      expect(seen.get('evt_http')?.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'r1' });
      expect((await send(server.url, [body], { 'x-service-signature': sig, 'content-length': String(body.length) })).status).toBe(200);
      expect((await send(server.url, [body.replace('1}', '2}')], { 'x-service-signature': sig })).status).toBe(401);

      const tooBig = await send(
        server.url,
        Array.from({ length: 8 }, () => Buffer.alloc(512, 97)),
        { 'x-service-signature': sig },
      );
      expect(tooBig.status).toBe(413);
      expect(tooBig.connection).toBe('close');
      const declared = await send(server.url, [Buffer.alloc(10)], { 'x-service-signature': sig, 'content-length': '5000' }).catch(() => ({
        status: 413,
      }));
      expect(declared.status).toBe(413);

      const slow = await send(server.url, [body.slice(0, 10), body.slice(10, 20), body.slice(20)], { 'x-service-signature': sig }, 150);
      expect(slow.status).toBe(408);
      expect(logs.filter((l) => l.includes('"outcome":"accepted"'))).toHaveLength(1);
    } finally {
      await server.close(100);
    }
  });
});

describe('the route on the ingest stream', () => {
  const body = '{"id":"evt_7","event":"lead.won","created_at":"2026-01-01T00:00:00Z","data":{"id":1}}';
  const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  function observed(sink: DeliverySink) {
    const events: IngestEvent[] = [];
    const ran: string[] = [];
    const record = (e: IngestEvent) => {
      events.push(e);
    };
    const ingest = new IngestBus().subscribe({
      received: (e) => {
        record(e);
        return { run: (fn) => (ran.push('receipt'), fn()) };
      },
      storing: (e) => {
        record(e);
        return { run: (fn) => (ran.push('append'), fn()), traceparent: TP };
      },
      stored: record,
      answered: record,
    });
    const app = createReceiverApp({
      webhookPath: '/webhooks',
      config: { webhookSecrets: ['current'], signatureHeader: 'x-service-signature', maxBodyBytes: 1024, bodyTimeoutMs: 1000 },
      sink,
      log: createLogger({ level: 'silent' }),
      ingest,
      readiness: async () => ({ ready: true, details: {} }),
    });
    return { app, events, ran };
  }

  it('received, storing (the stored delivery carries its scope trace context), stored, answered: in that order, for one request', async () => {
    const { sink, seen } = memorySink();
    const { app, events, ran } = observed(sink);
    const r = await app.request('/webhooks', {
      method: 'POST',
      body,
      headers: { 'x-service-signature': sign('current', body), 'user-agent': 'probe/1' },
    });
    expect(r.status).toBe(202);
    expect(events.map((e) => e.type)).toEqual(['received', 'storing', 'stored', 'answered']);
    expect(ran).toEqual(['receipt', 'append']);
    const [received, storing, stored, answered] = events;
    expect(received).toEqual({ type: 'received', request: { method: 'POST', path: '/webhooks', route: '/webhooks' } });
    expect(storing).toMatchObject({ delivery: { key: 'evt_7', name: 'lead.won', headers: { 'user-agent': 'probe/1' } } });
    expect(Buffer.from((storing as { delivery: { bytes: Uint8Array } }).delivery.bytes).toString()).toBe(body);
    expect(stored).toMatchObject({ ok: true, outcome: 'accepted' });
    expect(answered).toMatchObject({ ok: true, status: 202, report: { outcome: 'accepted', key: 'evt_7', secretIndex: 0 } });
    expect((answered as { request: unknown }).request).toBe((received as { request: unknown }).request);
    expect(seen.get('evt_7')?.traceparent).toBe(TP);
  });

  it('a refused request is answered without a store; a store that fails is stored with its error and answered 503', async () => {
    const refused = observed(memorySink().sink);
    expect((await refused.app.request('/webhooks', { method: 'POST', body })).status).toBe(401);
    expect(refused.events.map((e) => e.type)).toEqual(['received', 'answered']);
    expect(refused.events[1]).toMatchObject({ ok: true, status: 401, report: { outcome: 'bad_signature', reason: 'missing' } });

    const failing = observed(memorySink(true).sink);
    const r = await failing.app.request('/webhooks', { method: 'POST', body, headers: { 'x-service-signature': sign('current', body) } });
    expect(r.status).toBe(503);
    expect(failing.events.map((e) => e.type)).toEqual(['received', 'storing', 'stored', 'answered']);
    expect(failing.events[2]).toMatchObject({ ok: false, error: new Error('redis down') });
    expect(failing.events[3]).toMatchObject({ ok: true, status: 503, report: { outcome: 'unavailable' } });
  });

  it('a route that throws ends its request with answered and the error; the app answers 500', async () => {
    const events: IngestEvent[] = [];
    const log = createLogger({ level: 'silent' });
    // The access log breaking is the one failure the route does not catch itself.
    const broken = Object.assign(Object.create(log) as typeof log, {
      child: () => ({
        isLevelEnabled: () => {
          throw new Error('access log broken');
        },
      }),
    });
    const app = createReceiverApp({
      webhookPath: '/webhooks',
      config: { webhookSecrets: ['current'], signatureHeader: 'x-service-signature', maxBodyBytes: 1024, bodyTimeoutMs: 1000 },
      sink: memorySink().sink,
      log: broken,
      ingest: new IngestBus().subscribe({ received: (e) => void events.push(e), answered: (e) => void events.push(e) }),
      readiness: async () => ({ ready: true, details: {} }),
    });
    const r = await app.request('/webhooks', { method: 'POST', body, headers: { 'x-service-signature': sign('current', body) } });
    expect(r.status).toBe(500);
    expect(events.map((e) => e.type)).toEqual(['received', 'answered']);
    expect(events[1]).toMatchObject({ ok: false, error: new Error('access log broken') });
  });
});
