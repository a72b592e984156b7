import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { API_BASE, createApp } from './app.js';
import { SandboxClock, type Clock } from './clock.js';
import type { RetryPolicy } from './events/backoff.js';
import { WebhookEmitter } from './events/emitter.js';
import type { SeedExtras } from './seed/index.js';
import { SandboxState } from './state.js';
import { describeToken, type TokenInfo } from './tokens.js';

// `switchyard/sandbox`: createSandbox and the types of what it takes and returns;
// the rest of the sandbox (routes, seed, clock, emitter internals) is not public.
export type { Clock } from './clock.js';
export type { RetryPolicy } from './events/backoff.js';
export type { WebhookEmitter, DeliveryRecord } from './events/emitter.js';
export type { Envelope } from './events/envelope.js';
export type { SeedExtras } from './seed/index.js';
export type { SandboxState } from './state.js';
export type { TokenInfo } from './tokens.js';

/** Options of {@link createSandbox}; every one is optional. */
export interface SandboxOptions {
  /** Fixes the full-access token of the first workspace (default `sbx_full_acme`). */
  token?: string;
  /** Where events are POSTed; needs `secret`. */
  webhookUrl?: string;
  /** Signing secret of `X-Service-Signature`. */
  secret?: string;
  /** Requests per 10 s per token (spec: 30, 60 or 100 by plan). Default 30. */
  burst?: number;
  /** Extra seed records (the parsed `--seed` file). */
  seed?: SeedExtras;
  /** Base clock in epoch ms; the `/_sandbox/clock` hook moves time on top of it. */
  clock?: Clock;
  /** Transport for event deliveries. */
  fetch?: typeof fetch;
  /** Event retry timings (tests use a short base). */
  retry?: Partial<RetryPolicy>;
  /** Random source of fault injection's error share. */
  random?: () => number;
  /** Refuse calls without `X-Forwarded-Proto: https` with 403 (spec: plain HTTP is refused). Off by default. */
  requireTls?: boolean;
}

/** A listening sandbox. */
export interface RunningSandbox {
  /** Origin, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** API base, e.g. `http://127.0.0.1:4010/api/v1`. */
  baseUrl: string;
  port: number;
  /** Stops the server and the event retries. */
  close(): Promise<void>;
}

/** What {@link createSandbox} returns. */
export interface Sandbox {
  app: Hono;
  state: SandboxState;
  emitter: WebhookEmitter;
  /** Printed tokens (label, value, abilities, ...), after the latest reset. */
  readonly tokens: TokenInfo[];
  listen(port?: number, host?: string): Promise<RunningSandbox>;
}

/**
 * Creates a stateful, in-memory simulator of the workspace API (as the API
 * spec describes it) that emits signed events. Nothing listens until `listen()`.
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const clock = new SandboxClock(options.clock);
  const state = new SandboxState({
    clock, burst: options.burst ?? 30,
    ...(options.token ? { fullToken: options.token } : {}),
    ...(options.seed ? { extras: options.seed } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.requireTls ? { requireTls: true } : {}),
  });
  const emitter = new WebhookEmitter({
    webhookUrl: options.webhookUrl, secret: options.secret, clock: () => clock.now(),
    ...(options.fetch ? { fetch: options.fetch } : {}), ...(options.retry ? { retry: options.retry } : {}),
  });
  const app = createApp({ state, emitter });

  const listen = (port = 0, host = '127.0.0.1'): Promise<RunningSandbox> => new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
      const shown = host.includes(':') ? `[${host}]` : host;
      const url = `http://${shown}:${info.port}`;
      resolve({
        url, baseUrl: `${url}${API_BASE}`, port: info.port,
        close: async () => {
          await emitter.close();
          await new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          });
        },
      });
    });
    server.once('error', reject);
  });

  return {
    app, state, emitter, listen,
    get tokens() {
      return state.tokens.map(describeToken);
    },
  };
}
