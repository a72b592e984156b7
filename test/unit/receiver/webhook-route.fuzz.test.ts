/**
 * Fuzzing of the webhook route through `createReceiverApp` + `app.request`:
 * random methods, bodies, signatures and headers only ever get one of the
 * documented answers (README "Receiver answers": 202/200/401/405/408/413/503),
 * never a 500, and a correctly signed POST is always stored (202 or 200).
 */
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { deliveryBytes } from '../../../src/queue/delivery.js';
import { createReceiverApp } from '../../../src/receiver/app.js';
import type { DeliverySink } from '../../../src/queue/delivery.js';
import { sign } from '../../../src/events/signature.js';

const SECRETS = ['current', 'previous'];
const MAX = 2_048;
const DOCUMENTED = [200, 202, 401, 405, 408, 413, 503];

function makeApp(mode: 'ok' | 'down') {
  const seen = new Map<string, StoredDelivery>();
  const sink: DeliverySink = {
    put: async (d) => {
      if (mode === 'down') throw new Error('redis down');
      if (seen.has(d.key)) return 'duplicate';
      seen.set(d.key, d);
      return 'accepted';
    },
  };
  const errors: string[] = [];
  const log = createLogger({
    level: 'error',
    destination: new Writable({
      write(c, _e, cb) {
        errors.push(String(c));
        cb();
      },
    }),
  });
  const app = createReceiverApp({
    webhookPath: '/webhooks',
    config: { webhookSecrets: SECRETS, signatureHeader: 'X-Service-Signature', maxBodyBytes: MAX, bodyTimeoutMs: 1_000 },
    sink,
    log,
    readiness: async () => ({ ready: true, details: {} }),
  });
  return { app, seen, errors };
}

const body = fc.oneof(
  fc.uint8Array({ maxLength: 600 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => new Uint8Array(Buffer.from(JSON.stringify(v) ?? 'null'))),
  fc
    .record(
      {
        id: fc.oneof(fc.string({ maxLength: 20 }), fc.integer()),
        event: fc.string({ maxLength: 20 }),
        data: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    )
    .map((v) => new Uint8Array(Buffer.from(JSON.stringify(v)))),
  fc.integer({ min: MAX - 2, max: MAX + 2 }).map((n) => new Uint8Array(n).fill(0x20)),
);
const signatureMode = fc.constantFrom('current', 'previous', 'other', 'none', 'garbage', 'other-bytes');
const headerName = fc.oneof(
  fc.constantFrom(
    'content-type',
    'content-encoding',
    'transfer-encoding',
    'x-request-id',
    'user-agent',
    'x-attempt',
    'cookie',
    'authorization',
    'expect',
  ),
  fc.stringMatching(/^x-[a-z0-9-]{1,15}$/),
);
const headerValue = fc.oneof(
  fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', 'gzip', 'chunked', '100-continue', ''),
  fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
);
const method = fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD');

describe('webhook route (fuzzed through app.request)', () => {
  for (const mode of ['ok', 'down'] as const) {
    it(`answers only documented statuses, never 500 (sink ${mode === 'ok' ? 'up' : 'down'})`, async () => {
      const { app, seen, errors } = makeApp(mode);
      let answered = 0;
      let refusedByFetch = 0;
      await fc.assert(
        fc.asyncProperty(
          method,
          body,
          signatureMode,
          fc.dictionary(headerName, headerValue, { maxKeys: 5 }),
          fc.boolean(),
          async (m, b, sig, extra, sigUpper) => {
            const headers: Record<string, string> = { ...extra };
            if (sig === 'current' || sig === 'previous') headers[sigUpper ? 'X-SERVICE-SIGNATURE' : 'x-service-signature'] = sign(sig, b);
            else if (sig === 'other') headers['x-service-signature'] = sign('intruder', b);
            else if (sig === 'other-bytes') headers['x-service-signature'] = sign('current', new Uint8Array([...b, 1]));
            else if (sig === 'garbage') headers['x-service-signature'] = `sha256=${'z'.repeat(64)}`;
            const hasBody = m !== 'GET' && m !== 'HEAD';
            let res: Response;
            try {
              res = await app.request('/webhooks', { method: m, headers, ...(hasBody ? { body: b } : {}) });
            } catch (err) {
              // The Fetch API itself refuses some header mixes (e.g. forbidden values): not the route's answer.
              refusedByFetch++;
              fc.pre(false);
              throw err;
            }
            answered++;
            expect(DOCUMENTED).toContain(res.status);
            if (m !== 'POST') expect(res.status).toBe(405);
            else if (b.byteLength > MAX) expect(res.status).toBe(413);
            else if (sig === 'current' || sig === 'previous') {
              expect(mode === 'ok' ? [200, 202] : [503]).toContain(res.status);
              if (mode === 'ok') {
                const { delivery } = (await res.json()) as { delivery: string };
                // Whatever the bytes, what is stored is exactly what was signed (invalid UTF-8 kept as base64).
                expect(Buffer.from(deliveryBytes(seen.get(delivery) as StoredDelivery)).equals(Buffer.from(b))).toBe(true);
              }
            } else expect(res.status).toBe(401);
          },
        ),
        { numRuns: 400 },
      );
      console.log(
        `[fuzz] webhook route (sink ${mode}): ${answered} requests answered, ${refusedByFetch} header mixes refused by the Fetch API before the route`,
      );
      expect(answered).toBeGreaterThan(300);
      expect(errors.filter((l) => l.includes('unexpected error'))).toEqual([]);
    });
  }

  it('a body that never ends is cut off with 408', async () => {
    const { app } = makeApp('ok');
    const endless = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) });
    const res = await app.request('/webhooks', {
      method: 'POST',
      body: endless,
      headers: { 'x-service-signature': sign('current', '') },
      duplex: 'half',
    });
    expect(res.status).toBe(408);
  });
});
