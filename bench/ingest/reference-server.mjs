// Reference points for bench/ingest: Hono routes on @hono/node-server that
// read the body and then do one thing, answering 202:
//   MODE=lpush         one raw Redis LPUSH of the bytes (ioredis)       } the two designs
//   MODE=queue-add     a plain `await queue.add()` (BullMQ)             } the issue quotes
//   MODE=read          nothing more (reading the body is all)           } steps of Switchyard's
//   MODE=verify        Switchyard's `verify` (HMAC, constant time)      } own path, no Redis:
//   MODE=verify-parse  `verify`, then `parseEnvelope` (JSON)            } where the CPU goes
//   MODE=floor         read, `verify`, `parseEnvelope`, then one LPUSH   } the floor: the least any
//                      of the body (no dedupe, no group commit)         } verifying durable route does
// No dedupe, no durability: they show where this harness puts those designs
// and steps relative to the bare route, next to Switchyard's full path.
// The step modes import the built code (dist/; `npm run build`).
// Usage: PORT=<port> REDIS_PORT=<port> MODE=<mode> [SECRET=<secret>] node bench/ingest/reference-server.mjs
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';

const mode = process.env.MODE ?? 'lpush';
const secrets = [process.env.SECRET ?? 'bench-secret'];
const needsDist = mode === 'verify' || mode === 'verify-parse' || mode === 'floor';
const { verify } = needsDist ? await import('../../dist/events/signature.js') : {};
const { parseEnvelope } = needsDist ? await import('../../dist/events/envelope.js') : {};
const redisPort = Number(process.env.REDIS_PORT);
const redis = new Redis({ port: redisPort, host: '127.0.0.1', maxRetriesPerRequest: null });
const queue = mode === 'queue-add' ? new Queue('reference', { connection: redis, prefix: 'ref' }) : undefined;

function readBody(incoming) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    incoming.on('data', (c) => chunks.push(c));
    incoming.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    incoming.on('error', reject);
  });
}

const app = new Hono();
app.post('/webhooks', async (c) => {
  const incoming = c.env.incoming;
  const body = await readBody(incoming);
  if (mode === 'queue-add') await queue.add('delivery', { body: body.toString('utf8') });
  else if (mode === 'lpush') await redis.lpush('ref:list', body);
  else if (needsDist) {
    if (!verify(secrets, body, incoming.headers['x-service-signature']).ok) return c.json({ status: 'rejected' }, 401);
    if (mode === 'verify-parse') return c.json({ status: 'accepted', delivery: parseEnvelope(body, body.toString('utf8')).key }, 202);
    if (mode === 'floor') {
      const { key } = parseEnvelope(body, body.toString('utf8'));
      await redis.lpush('ref:list', body);
      return c.json({ status: 'accepted', delivery: key }, 202);
    }
  }
  return c.json({ status: 'accepted' }, 202);
});

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});
const stop = () =>
  server.close(() => {
    void queue?.close();
    redis.disconnect();
    process.exit(0);
  });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
