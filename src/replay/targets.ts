import { parseEnvelope, sign } from '../events/index.js';
import { encodeBody, KEPT_HEADERS, type StoredDelivery, type IngestStore } from '../queue/index.js';
import { keepAlivePoster, type Poster } from './http-post.js';
import type { ReplayItem } from './inputs.js';

/** How one replayed delivery ended. `rejected`: the receiver refused it (4xx) or it is not a valid event (--inline). */
export type ReplayOutcomeKind = 'accepted' | 'duplicate' | 'rejected' | 'failed';

export interface ReplayOutcome {
  readonly kind: ReplayOutcomeKind;
  /** Delivery key as the receiver computes it. */
  readonly key: string;
  readonly event: string | null;
  /** HTTP status (over HTTP), else undefined. */
  readonly status?: number;
  /** Why it was rejected or failed. */
  readonly detail?: string;
  /** Extra lines to print under the delivery (the handler outcomes of --inline). */
  readonly lines?: readonly string[];
}

/** Sends one item somewhere; never throws (a failure is an outcome). */
export type ReplayTarget = (item: ReplayItem) => Promise<ReplayOutcome>;

export interface HttpTargetOptions {
  url: string;
  secret: string;
  /** Lower-case header name of the signature (SIGNATURE_HEADER). */
  signatureHeader: string;
  /** Transport; default a keep-alive node:http(s) poster. */
  post?: Poster;
  /** Sockets kept open (the replay's concurrency). */
  maxSockets?: number;
  timeoutMs?: number;
}

/** Headers of a fixture worth sending again (content type, user agent, request ids). */
function replayHeaders(item: ReplayItem): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(item.headers)) {
    if ((KEPT_HEADERS as readonly string[]).includes(k.toLowerCase())) out[k.toLowerCase()] = v;
  }
  return out;
}

/**
 * POSTs the exact bytes, signed afresh with `secret` in `signatureHeader`.
 * 202 accepted, 200 duplicate, other 4xx rejected, 5xx or no answer failed.
 */
export function httpTarget(opts: HttpTargetOptions): ReplayTarget & { close(): void } {
  const post = opts.post ?? keepAlivePoster({ maxSockets: opts.maxSockets ?? 8, timeoutMs: opts.timeoutMs ?? 30_000 });
  const target: ReplayTarget = async (item) => {
    const env = parseEnvelope(item.bytes);
    const base = { key: env.key, event: env.name };
    try {
      const res = await post(opts.url, item.bytes, { ...replayHeaders(item), [opts.signatureHeader]: sign(opts.secret, item.bytes) });
      const { text } = res;
      if (res.status === 202) return { ...base, kind: 'accepted', status: 202 };
      if (res.status === 200) return { ...base, kind: 'duplicate', status: 200 };
      const detail = `HTTP ${res.status}${text ? ` ${text.slice(0, 200)}` : ''}`;
      return { ...base, kind: res.status >= 400 && res.status < 500 ? 'rejected' : 'failed', status: res.status, detail };
    } catch (err) {
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      return { ...base, kind: 'failed', detail: `${opts.url}: ${cause}` };
    }
  };
  return Object.assign(target, { close: () => post.close() });
}

/**
 * `--direct`: the receiver's own dedupe + durable inbox (IngestStore), no
 * HTTP and no signature. The ingest pump of any running switchyard process
 * moves the delivery into the `events` queue.
 */
export function directTarget(store: IngestStore, now: () => Date = () => new Date()): ReplayTarget {
  return async (item) => {
    const env = parseEnvelope(item.bytes);
    const headers = replayHeaders(item);
    const delivery: StoredDelivery = {
      key: env.key,
      name: env.name,
      receivedAt: now().toISOString(),
      secretIndex: 0,
      headers,
      ...encodeBody(item.bytes),
    };
    try {
      const outcome = await store.put(delivery);
      return { key: env.key, event: env.name, kind: outcome };
    } catch (err) {
      return { key: env.key, event: env.name, kind: 'failed', detail: `Redis: ${err instanceof Error ? err.message : String(err)}` };
    }
  };
}
