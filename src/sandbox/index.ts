import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { API_BASE, createApp } from './app.js';
import { SandboxClock, type Clock } from './clock.js';
import type { RetryPolicy } from './events/backoff.js';
import { WebhookEmitter } from './events/emitter.js';
import type { SeedExtras } from './seed/index.js';
import { StateKeeper } from './keeper.js';
import { restoreSnapshot, snapshotOf } from './snapshot.js';
import { SandboxState } from './state.js';
import { describeToken, type TokenInfo } from './tokens.js';
import { addedOf, resolveWorkspaces, targetsOf, type SandboxWorkspace } from './workspace-options.js';

// `switchyard/sandbox`: createSandbox and the types of what it takes and returns;
// the rest of the sandbox (routes, seed, clock, emitter internals) is not public.
export type { Clock } from './clock.js';
export type { RetryPolicy } from './events/backoff.js';
export type { WebhookEmitter, DeliveryRecord } from './events/emitter.js';
export type { Envelope } from './events/envelope.js';
export type { SeedExtras } from './seed/index.js';
export type { SandboxState } from './state.js';
export type { TokenInfo } from './tokens.js';
export type { SandboxWorkspace } from './workspace-options.js';

/** Options of {@link createSandbox}; every one is optional. */
export interface SandboxOptions {
  /** Fixes the full-access token of the first workspace (default `sbx_full_acme`). */
  token?: string;
  /** Where the first workspace's events are POSTed; needs `secret`. */
  webhookUrl?: string;
  /** Signing secret of `X-Service-Signature` of the first workspace's events. */
  secret?: string;
  /** Requests per 10 s per token (spec: 30, 60 or 100 by plan). Default 30; a workspace's own `burst` wins. */
  burst?: number;
  /**
   * Each workspace's settings, in order: Acme, the second seeded workspace
   * (Other Co), then workspaces added empty (up to 100 in all), each with its
   * own full-access token, webhook URL, secret and burst. A workspace's events
   * go to its own URL only, signed with its own secret. `workspaces[0]` wins
   * over `token`, `webhookUrl` and `secret`.
   */
  workspaces?: readonly SandboxWorkspace[];
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
  /**
   * Keep the sandbox in this file (`switchyard dev --keep-sandbox`): loaded at
   * creation when it exists (a file that cannot be read throws), written
   * shortly after each change and on `close()`. Records, ids, tokens,
   * switches, the clock's offset, Idempotency-Keys, quotas, events and their
   * deliveries are kept; queued deliveries go out again once it listens.
   */
  stateFile?: string;
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
  /** Whether it started from a kept state (`stateFile` existed). */
  readonly restored: boolean;
  listen(port?: number, host?: string): Promise<RunningSandbox>;
}

/** The app with every request that may change something (any method but GET and HEAD) followed by a save. */
function keptApp(api: Hono, keeper: StateKeeper): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') keeper.touch();
  });
  app.route('/', api);
  return app;
}

/**
 * Creates a stateful, in-memory simulator of the workspace API (as the API
 * spec describes it) that emits signed events. Nothing listens until `listen()`.
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const clock = new SandboxClock(options.clock);
  const { token, webhookUrl, secret } = options;
  const resolved = resolveWorkspaces(options.workspaces, { token, webhookUrl, secret });
  const state = new SandboxState({
    clock,
    burst: options.burst ?? 30,
    bursts: resolved.map((ws) => ws.burst),
    fullToken: resolved[0]!.token!,
    otherToken: resolved[1]!.token!,
    added: addedOf(resolved),
    ...(options.seed ? { extras: options.seed } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.requireTls ? { requireTls: true } : {}),
  });
  let keeper: StateKeeper | undefined;
  let restored = false;
  const emitter = new WebhookEmitter({
    primaryWorkspace: state.firstWorkspace().id,
    targets: targetsOf(resolved, state.workspaces.values()),
    clock: () => clock.now(),
    onChange: () => keeper?.touch(),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
  });
  const api = createApp({ state, emitter });
  let app = api;
  if (options.stateFile) {
    const kept = new StateKeeper(options.stateFile, () => snapshotOf(state, emitter));
    const saved = kept.load();
    if (saved) restoreSnapshot(state, emitter, saved);
    restored = saved !== null;
    keeper = kept;
    app = keptApp(api, kept);
  }

  const listen = (port = 0, host = '127.0.0.1'): Promise<RunningSandbox> =>
    new Promise((resolve, reject) => {
      emitter.resume();
      const server = serve({ fetch: app.fetch, port, hostname: host }, (info: AddressInfo) => {
        const shown = host.includes(':') ? `[${host}]` : host;
        const url = `http://${shown}:${info.port}`;
        resolve({
          url,
          baseUrl: `${url}${API_BASE}`,
          port: info.port,
          close: async () => {
            await emitter.close();
            keeper?.close();
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
    app,
    state,
    emitter,
    listen,
    restored,
    get tokens() {
      return state.tokens.map(describeToken);
    },
  };
}
