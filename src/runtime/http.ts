import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /** `http://host:port` (loopback address when bound to all interfaces). */
  readonly url: string;
  /** What the socket is bound to, `host:port` (`0.0.0.0:3000` = every interface): what logs show. */
  readonly address: string;
  /** Stops accepting, lets in-flight requests finish, then closes lingering sockets after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Serves a Hono app with @hono/node-server; resolves once listening. */
export function listen(app: Hono, opts: { host: string; port: number; headersTimeoutMs?: number }): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host }, (info: AddressInfo) => {
      const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
      resolve({
        server,
        port: info.port,
        address: `${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`,
        close: (graceMs = 10_000) => closeServer(server, graceMs),
      });
    }) as Server;
    // Slow or endless headers are cut off; bodies have their own timeout in the route.
    server.headersTimeout = opts.headersTimeoutMs ?? 10_000;
    server.requestTimeout = 0;
    server.keepAliveTimeout = 5_000;
    server.once('error', reject);
  });
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
