// The ceiling for bench/ingest: a bare Hono route on @hono/node-server that
// answers 200 with a small JSON body (no body read, no verify, no Redis).
// Usage: PORT=<port> node bench/ingest/bare-server.mjs   (binds 127.0.0.1)
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.post('/webhooks', (c) => c.json({ status: 'ok' }, 200));

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening ${info.port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
