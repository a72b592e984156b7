// Reference points for bench/ingest, the two the issue quotes: a Hono route
// on @hono/node-server that reads the body and then either
//   MODE=lpush      does one raw Redis LPUSH of the bytes (ioredis), or
//   MODE=queue-add  does a plain `await queue.add()` (BullMQ) per request,
// answering 202. No signature, no dedupe: they show where this harness puts
// those two designs relative to the bare route, next to Switchyard's full path.
// Usage: PORT=<port> REDIS_PORT=<port> MODE=lpush|queue-add node bench/ingest/reference-server.mjs
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';

const mode = process.env.MODE ?? 'lpush';
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
  const body = await readBody(c.env.incoming);
  if (queue) await queue.add('delivery', { body: body.toString('utf8') });
  else await redis.lpush('ref:list', body);
  return c.json({ status: 'accepted' }, 202);
});

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});
const stop = () => server.close(() => { void queue?.close(); redis.disconnect(); process.exit(0); });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
