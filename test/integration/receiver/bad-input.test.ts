/**
 * Bad input against the real receiver over real HTTP (startTestService on the
 * shared test Redis). Each abuse gets a clear answer, and afterwards
 * `/healthz` is 200 and a genuine delivery is still accepted. Raw `node:net`
 * sockets express what fetch cannot (dripped bodies, endless chunked bodies,
 * header floods).
 */
import { connect, type Socket } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bodyKey, jobIdFor } from '../../../src/events/envelope.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { sign } from '../../../src/events/signature.js';
import { eventBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, TEST_SECRET, waitFor } from '../../support/service.js';

const MAX = 64 * 1024;
const BODY_TIMEOUT_MS = 1_000;

interface RawAnswer {
  status: number;
  head: string;
  body: string;
  ms: number;
  closed: boolean;
}

/** Opens a socket, lets `drive` write to it, and collects the answer until the server closes or `timeoutMs`. */
function raw(port: number, drive: (sock: Socket, closed: () => boolean) => Promise<void> | void, timeoutMs = 8_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = connect({ host: '127.0.0.1', port });
    let data = '';
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      sock.destroy();
      resolve({ status, head, body, ms: Date.now() - started, closed });
    };
    const timer = setTimeout(finish, timeoutMs);
    sock.on('data', (d) => {
      data += d.toString('latin1');
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      closed = true;
      finish();
    });
    sock.on('connect', () => {
      void Promise.resolve(drive(sock, () => closed || sock.destroyed)).catch(() => undefined);
    });
  });
}

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('bad input over real HTTP', () => {
  const prefix = uniquePrefix('badin');
  let service: Awaited<ReturnType<typeof startTestService>>;
  let port: number;
  let redis: Redis;
  let events: Queue<StoredDelivery>;

  beforeAll(async () => {
    service = await startTestService({
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      MAX_BODY_BYTES: String(MAX),
      BODY_TIMEOUT: `${BODY_TIMEOUT_MS}ms`,
    });
    port = service.receiver?.http.port as number;
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await service?.close();
    await events?.close();
    redis?.disconnect();
  });

  // After every abuse: the process is healthy and still takes a genuine delivery.
  afterEach(async () => {
    const health = await fetch(service.url.replace('/webhooks', '/healthz'));
    expect(health.status).toBe(200);
    expect((await deliver(service.url, eventBody())).status).toBe(202);
    expect(service.lines.join('')).not.toMatch(/unexpected error/);
  });

  describe('slow and endless bodies (BODY_TIMEOUT)', () => {
    const signedHead = (extra: string[]) =>
      head([
        'POST /webhooks HTTP/1.1',
        'Host: x',
        `X-Service-Signature: ${sign(TEST_SECRET, 'x')}`,
        'Content-Type: application/json',
        ...extra,
      ]);

    it('a body dripped one byte every 200 ms is cut off with 408 and the connection closed', async () => {
      const r = await raw(port, async (s, closed) => {
        s.write(signedHead(['Content-Length: 1000']));
        while (!closed()) {
          s.write('x');
          await sleep(200);
        }
      });
      expect(r.status).toBe(408);
      expect(JSON.parse(r.body)).toMatchObject({ status: 'rejected', error: 'body_timeout' });
      expect(r.head).toMatch(/connection: close/i);
      expect(r.ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
      expect(r.ms).toBeLessThan(BODY_TIMEOUT_MS + 3_000);
      expect(r.closed).toBe(true);
    });

    it('an endless chunked body is cut off with 408', async () => {
      const r = await raw(port, async (s, closed) => {
        s.write(signedHead(['Transfer-Encoding: chunked']));
        while (!closed()) {
          s.write('5\r\nhello\r\n');
          await sleep(50);
        }
      });
      expect(r.status).toBe(408);
      expect(r.ms).toBeLessThan(BODY_TIMEOUT_MS + 3_000);
    });

    it('a declared body that never comes is cut off with 408', async () => {
      const r = await raw(port, (s) => {
        s.write(signedHead(['Content-Length: 50']));
      });
      expect(r.status).toBe(408);
    });

    it('twenty slow senders at once do not starve a genuine delivery', async () => {
      const slow = Array.from({ length: 20 }, () =>
        raw(port, async (s, closed) => {
          s.write(signedHead(['Content-Length: 1000']));
          while (!closed()) {
            s.write('x');
            await sleep(100);
          }
        }),
      );
      await sleep(200);
      const started = Date.now();
      expect((await deliver(service.url, eventBody())).status).toBe(202);
      expect(Date.now() - started).toBeLessThan(BODY_TIMEOUT_MS);
      expect((await Promise.all(slow)).map((r) => r.status)).toEqual(Array(20).fill(408));
    });
  });

  describe('bodies', () => {
    it('an invalid UTF-8 body, signed, is accepted and kept byte for byte as base64', async () => {
      const bytes = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0xff, 0xfe, 0xc3, 0x28, 0x80, 0x7d]);
      const r = await fetch(service.url, {
        method: 'POST',
        body: bytes,
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(TEST_SECRET, bytes) },
      });
      expect(r.status).toBe(202);
      const { delivery } = (await r.json()) as { delivery: string };
      expect(delivery).toBe(bodyKey(bytes));
      const job = await waitFor(() => events.getJob(jobIdFor(delivery)));
      expect(job.data.body).toBeUndefined();
      expect(Buffer.from(job.data.bodyBase64 as string, 'base64').equals(bytes)).toBe(true);
    });

    it.each([10_000, 30_000])('deeply nested JSON (%i levels), signed, is accepted', async (depth) => {
      const body = `{"id":"evt_deep_${depth}_${Date.now()}","event":"message.received","data":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      expect(body.length).toBeLessThan(MAX);
      const r = await deliver(service.url, body);
      expect(r.status).toBe(202);
    });

    const sized = (n: number, id: string) => {
      const prefixText = `{"id":"${id}","event":"message.received","data":{"pad":"`;
      const suffix = '"}}';
      return prefixText + 'a'.repeat(n - prefixText.length - suffix.length) + suffix;
    };

    it('huge JSON just under and exactly at MAX_BODY_BYTES is accepted; one byte over is 413', async () => {
      for (const n of [MAX - 1, MAX]) {
        const body = sized(n, `evt_size_${n}_${Date.now()}`);
        expect(Buffer.byteLength(body)).toBe(n);
        expect((await deliver(service.url, body)).status).toBe(202);
      }
      const over = sized(MAX + 1, `evt_size_over_${Date.now()}`);
      const r = await deliver(service.url, over);
      expect(r.status).toBe(413);
      expect(await r.json()).toMatchObject({ status: 'rejected', error: 'too_large' });
    });

    it('a chunked body (no Content-Length) past MAX_BODY_BYTES is cut off with 413', async () => {
      const chunk = 'a'.repeat(8 * 1024);
      const r = await raw(port, async (s, closed) => {
        s.write(
          head(['POST /webhooks HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked', `X-Service-Signature: ${sign(TEST_SECRET, 'x')}`]),
        );
        for (let i = 0; i < 64 && !closed(); i++) {
          s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
          await sleep(1);
        }
      });
      expect(r.status).toBe(413);
    });

    it('a chunked body sent in one write: within the limit 202 and stored byte for byte, past it 413', async () => {
      const send = (body: string) =>
        raw(port, (s) => {
          const chunks = [body.slice(0, 10), body.slice(10)].map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join('');
          s.write(
            head([
              'POST /webhooks HTTP/1.1',
              'Host: x',
              'Transfer-Encoding: chunked',
              'Connection: close',
              `X-Service-Signature: ${sign(TEST_SECRET, body)}`,
            ]) +
              chunks +
              '0\r\n\r\n',
          );
        });
      const id = `evt_chunked_${Date.now()}`;
      const fits = eventBody('message.received', undefined, { id });
      expect((await send(fits)).status).toBe(202);
      const job = await waitFor(() => events.getJob(jobIdFor(id)), 10_000);
      expect(job.data.body).toBe(fits);
      const over = JSON.stringify({ id: `${id}_big`, event: 'message.received', data: { note: 'x'.repeat(MAX) } });
      expect((await send(over)).status).toBe(413);
    });

    it('two deliveries pipelined in one write on a keep-alive connection are each stored byte for byte', async () => {
      const ids = [`evt_pipe_a_${Date.now()}`, `evt_pipe_b_${Date.now()}`];
      const bodies = ids.map((id) => eventBody('message.received', undefined, { id }).replace('"hi"', '"olá 🚚"'));
      const requests = bodies.map(
        (b, i) =>
          head([
            'POST /webhooks HTTP/1.1',
            'Host: x',
            `Content-Length: ${Buffer.byteLength(b)}`,
            ...(i === 1 ? ['Connection: close'] : []),
            `X-Service-Signature: ${sign(TEST_SECRET, b)}`,
          ]) + b,
      );
      const r = await raw(port, (s) => {
        s.write(requests.join(''));
      });
      expect(r.closed).toBe(true);
      const answers = [...(r.head + '\r\n\r\n' + r.body).matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
      expect(answers).toEqual(['202', '202']);
      for (const [i, id] of ids.entries()) {
        const job = await waitFor(() => events.getJob(jobIdFor(id)), 10_000);
        expect(job.data.body).toBe(bodies[i]);
      }
    });

    it('a declared Content-Length of 10 GB is refused with 413 before any body is sent', async () => {
      const r = await raw(port, (s) => {
        s.write(
          head(['POST /webhooks HTTP/1.1', 'Host: x', 'Content-Length: 10737418240', `X-Service-Signature: ${sign(TEST_SECRET, 'x')}`]),
        );
      });
      expect(r.status).toBe(413);
      expect(r.ms).toBeLessThan(BODY_TIMEOUT_MS);
    });
  });

  describe('content types do not matter, the signature does', () => {
    const types: [string, string | undefined][] = [
      ['text/plain', 'text/plain'],
      ['no Content-Type', undefined],
      ['multipart/form-data', 'multipart/form-data; boundary=----x'],
      ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ];

    it.each(types)('%s: signed is accepted (202), unsigned or wrongly signed is 401', async (_label, type) => {
      const body = eventBody();
      const headersFor = (sig?: string) => {
        const h: string[] = ['POST /webhooks HTTP/1.1', 'Host: x', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
        if (type) h.push(`Content-Type: ${type}`);
        if (sig) h.push(`X-Service-Signature: ${sig}`);
        return head(h) + body;
      };
      expect(
        (
          await raw(port, (s) => {
            s.write(headersFor(sign(TEST_SECRET, body)));
          })
        ).status,
      ).toBe(202);
      expect(
        (
          await raw(port, (s) => {
            s.write(headersFor());
          })
        ).status,
      ).toBe(401);
      expect(
        (
          await raw(port, (s) => {
            s.write(headersFor(sign('another-secret', body)));
          })
        ).status,
      ).toBe(401);
    });
  });

  describe('header floods', () => {
    it('many small headers (500, within the header size limit) still verify and are accepted', async () => {
      const body = eventBody();
      const flood = Array.from({ length: 500 }, (_, i) => `X-F${i}: v`);
      const r = await raw(port, (s) => {
        s.write(
          head([
            'POST /webhooks HTTP/1.1',
            'Host: x',
            ...flood,
            `Content-Length: ${Buffer.byteLength(body)}`,
            `X-Service-Signature: ${sign(TEST_SECRET, body)}`,
            'Connection: close',
          ]) + body,
        );
      });
      expect(r.status).toBe(202);
    });

    it('headers past the size limit (5 000 headers) get 431 from Node', async () => {
      const flood = Array.from({ length: 5_000 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(10)}`);
      const r = await raw(port, (s) => {
        s.write(head(['POST /webhooks HTTP/1.1', 'Host: x', ...flood, 'Content-Length: 0']));
      });
      expect(r.status).toBe(431);
    });

    it('one huge header (64 KB) gets 431 from Node', async () => {
      const r = await raw(port, (s) => {
        s.write(head(['POST /webhooks HTTP/1.1', 'Host: x', `X-Huge: ${'h'.repeat(64 * 1024)}`, 'Content-Length: 0']));
      });
      expect(r.status).toBe(431);
    });

    it('a huge signature header gets 431 and never reaches verification', async () => {
      const r = await raw(port, (s) => {
        s.write(head(['POST /webhooks HTTP/1.1', 'Host: x', `X-Service-Signature: sha256=${'a'.repeat(40_000)}`, 'Content-Length: 0']));
      });
      expect(r.status).toBe(431);
    });

    it('a repeated signature header is refused as malformed (401), never half-verified', async () => {
      const body = eventBody();
      const sig = sign(TEST_SECRET, body);
      const r = await raw(port, (s) => {
        s.write(
          head([
            'POST /webhooks HTTP/1.1',
            'Host: x',
            `Content-Length: ${Buffer.byteLength(body)}`,
            `X-Service-Signature: ${sig}`,
            `X-Service-Signature: ${sig}`,
            'Connection: close',
          ]) + body,
        );
      });
      expect(r.status).toBe(401);
    });
  });
});
