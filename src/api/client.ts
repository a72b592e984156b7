import type { Cluster, Redis } from 'ioredis';
import { randomIdempotencyKey, type IdempotencyKeyGenerator } from './idempotency-key.js';
import { sleep as defaultSleep } from '../util/index.js';
import { LIMITER_PRIORITIES, createMemoryRateLimiter, type LimiterPriority, type RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './rate-limiter-redis.js';
import { contactsResource } from './resources/contacts.js';
import { conversationsResource } from './resources/conversations.js';
import { dealsResource } from './resources/deals.js';
import { leadsResource } from './resources/leads.js';
import { messagesResource, notesResource } from './resources/messages.js';
import { ordersResource } from './resources/orders.js';
import { productsResource } from './resources/products.js';
import { one, type ResourceContext } from './resources/shared.js';
import { tasksResource } from './resources/tasks.js';
import type { ApiPromise } from './response.js';
import { DEFAULT_API_RETRY, type ApiRetryOptions } from './retry.js';
import { Me } from '../spec/schemas/index.js';
import { createTransport, type ApiLogger, type CallEvent, type RequestOptions, type WriteMemo } from './transport.js';

/** Options of {@link createApiClient}. Only `baseUrl` and `token` are required. */
export interface ApiClientOptions {
  /** `{base_url}` ending in `/api/v1`. https required, except loopback hosts (the sandbox). */
  baseUrl: string;
  /** Personal access token; sent only in the Authorization header. */
  token: string;
  /** Shares the rate limiter with every process using this token (keys hold only a SHA-256 of the token). */
  redis?: Redis | Cluster;
  /** Calls allowed per 10 s for this token, across processes (default 30, the smallest plan). */
  burst?: number;
  /** Key prefix of the shared limiter (default `switchyard:api-rate:`). */
  rateLimitPrefix?: string;
  /**
   * Priority of this client's calls at the rate limiter (default `normal`): a free
   * slot goes to the oldest waiter of the highest priority, across every process
   * sharing the limiter; lower priorities keep a minimum share (1 of every 10 grants).
   */
  priority?: LimiterPriority;
  /** A custom limiter, or `false` to send without limiting (not advised). */
  rateLimiter?: RateLimiter | false;
  fetch?: typeof globalThis.fetch;
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number;
  /** Waits (back-off, rate limiter); default `setTimeout`. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Per-request timeout (default 30 000 ms). */
  timeoutMs?: number;
  retry?: Partial<ApiRetryOptions>;
  /** Generates the Idempotency-Key of a write the caller did not key (default: random UUID). */
  idempotencyKey?: IdempotencyKeyGenerator;
  logger?: ApiLogger;
  /** Called after every attempt (status, rate-limit wait, remaining burst and quota, error): hook metrics here. */
  onCall?: (event: CallEvent) => void;
  /** Randomness for back-off jitter (tests). */
  random?: () => number;
  /** Remembered writes by Idempotency-Key: a remembered write is answered from it, not sent (the worker's per-run memory). */
  memo?: WriteMemo;
}

/**
 * Creates a typed client of the Workspace REST API.
 *
 * Every method returns an {@link ApiPromise}: `await` it for the record, or call
 * `.withResponse()` for `{ data, status, replayed, idempotencyKey, rateLimit, … }`.
 * Collections return a {@link Paginator}: `for await` over records, `.pages()` for pages.
 * Writes that the spec marks IK always send an Idempotency-Key (pass
 * `{ idempotencyKey }` to choose it) and are retried with that same key.
 *
 * @example
 * const api = createApiClient({ baseUrl: 'https://example.test/api/v1', token, redis });
 * const me = await api.me();
 * for await (const c of api.contacts.list({ label: 'vip' })) console.log(c.name);
 * const { data, replayed } = await api.messages.sendText(7, 'Hi', {}, { idempotencyKey: 'evt_1:greet' }).withResponse();
 */
export function createApiClient(options: ApiClientOptions) {
  if (typeof options.token !== 'string' || options.token.trim() === '' || /[\s\r\n]/.test(options.token)) {
    throw new TypeError('createApiClient: token must be a non-empty string without whitespace');
  }
  const burst = options.burst ?? 30;
  if (!Number.isInteger(burst) || burst < 1) throw new TypeError('createApiClient: burst must be a positive integer');
  const now = options.clock ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const priority = options.priority ?? 'normal';
  if (!LIMITER_PRIORITIES.includes(priority))
    throw new TypeError(`createApiClient: priority must be one of ${LIMITER_PRIORITIES.join(', ')}`);
  const limiter: RateLimiter | undefined =
    options.rateLimiter === false
      ? undefined
      : (options.rateLimiter ??
        (options.redis
          ? createRedisRateLimiter({
              redis: options.redis,
              token: options.token,
              burst,
              sleep,
              inflightMs: timeoutMs,
              ...(options.rateLimitPrefix ? { prefix: options.rateLimitPrefix } : {}),
            })
          : createMemoryRateLimiter({ burst, now, sleep, inflightMs: timeoutMs })));

  const transport = createTransport({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    now,
    sleep,
    timeoutMs,
    retry: { ...DEFAULT_API_RETRY, ...options.retry },
    limiter,
    priority,
    idempotencyKey: options.idempotencyKey ?? randomIdempotencyKey,
    logger: options.logger,
    onCall: options.onCall,
    random: options.random ?? Math.random,
    memo: options.memo,
  });
  const ctx: ResourceContext = { transport, now };

  return {
    /** `GET /me`: the token's teammate, company, account and abilities (a good first call). */
    me(opts?: RequestOptions): ApiPromise<Me> {
      return transport.request({ op: 'me', method: 'GET', path: '/me', schema: one(Me), repeat: 'safe', options: opts });
    },
    contacts: contactsResource(ctx),
    conversations: conversationsResource(ctx),
    messages: messagesResource(ctx),
    notes: notesResource(ctx),
    deals: dealsResource(ctx),
    orders: ordersResource(ctx),
    products: productsResource(ctx),
    tasks: tasksResource(ctx),
    leads: leadsResource(ctx),
    /** The limiter in use (undefined when disabled). */
    rateLimiter: limiter,
  };
}

/** The client returned by {@link createApiClient}. */
export type ApiClient = ReturnType<typeof createApiClient>;
