import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import type { StoredDelivery } from '../../src/queue/delivery.js';
import { createReceiverApp } from '../../src/receiver/app.js';
import type { DeliveryReport } from '../../src/receiver/outcomes.js';
import type { DeliverySink } from '../../src/receiver/webhook-route.js';
import { readBody } from '../../src/receiver/body.js';
import { sign } from '../../src/signature.js';

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
  const log = createLogger({ level: 'info', destination: new Writable({ write(c, _e, cb) { logs.push(String(c)); cb(); } }) as never });
  const app = createReceiverApp({
    webhookPath: '/webhooks',
    config: { webhookSecrets: ['current', 'previous'], signatureHeader: 'x-service-signature', maxBodyBytes: opts.max ?? 1024, bodyTimeoutMs: 1000 },
    sink, log, hooks: { onDelivery: (r) => reports.push(r) },
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
    const r = await post(app, body, headers as Record<string, string>);
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_signature');
    expect(seen.size).toBe(0);
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
        if (next) ctrl.enqueue(next); else ctrl.close();
      },
    });

  it('refuses a declared length over the limit without reading', async () => {
    let pulled = 0;
    const s = new ReadableStream<Uint8Array>({ pull(ctrl) { pulled++; ctrl.enqueue(new Uint8Array(10)); } });
    expect(await readBody(s, '5000', 100, 1000)).toEqual({ ok: false, reason: 'too_large' });
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('cuts off a chunked body as soon as it passes the limit', async () => {
    let pulled = 0;
    const s = new ReadableStream<Uint8Array>({ pull(ctrl) { pulled++; ctrl.enqueue(new Uint8Array(64)); } });
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
