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

/** Default time a client has to send a request's headers. */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * How often node looks for connections past their headers timeout. Node
 * checks only every `connectionsCheckingInterval` (30 s unless set when the
 * server is created), so a 10 s timeout answered 408 after up to 40 s; a tenth
 * of the timeout (25 ms to 1 s) answers within about 1.1 times it.
 */
export const checkingIntervalMs = (headersTimeoutMs: number): number => Math.min(1_000, Math.max(25, Math.floor(headersTimeoutMs / 10)));

/** Serves a Hono app with @hono/node-server; resolves once listening. */
export function listen(app: Hono, opts: { host: string; port: number; headersTimeoutMs?: number }): Promise<RunningServer> {
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  // Slow or endless headers are cut off (408); bodies have their own timeout in the route. The interval can only be set here.
  const serverOptions = {
    headersTimeout,
    requestTimeout: 0,
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: checkingIntervalMs(headersTimeout),
  };
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host, serverOptions }, (info: AddressInfo) => {
      const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
      resolve({
        server,
        port: info.port,
        address: `${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`,
        close: (graceMs = 10_000) => closeServer(server, graceMs),
      });
    }) as Server;
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
