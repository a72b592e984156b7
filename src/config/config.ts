import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SIGNATURE_HEADER } from '../spec/index.js';
import { tracingSettings, type TracingSettings } from './tracing.js';
import { formatDuration, parseDuration, parseSize } from '../util/index.js';
import { checkRequirements } from './requirements.js';
import { DEFAULT_WORKSPACE, type WorkspaceFields, type WorkspaceSpec } from './workspaces.js';
import { readWorkspacesFile } from './workspaces-file.js';

/**
 * The whole environment of Switchyard, validated once. Every other module
 * receives a `Config`; nothing else reads `process.env`.
 */
export interface Config extends WorkspaceFields {
  readonly port: number;
  readonly host: string;
  readonly webhookPath: string;
  /** Active webhook secrets; the first is the current one, the rest are accepted during rotation. */
  readonly webhookSecrets: readonly string[];
  readonly signatureHeader: string;
  /** Unset: a managed local redis-server under `.switchyard/`. */
  readonly redisUrl: string | undefined;
  readonly queuePrefix: string;
  readonly dedupeTtlMs: number;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  readonly spoolDir: string | undefined;
  readonly spoolMaxBytes: number;
  readonly captureDir: string | undefined;
  readonly captureRedact: boolean;
  readonly handlersDir: string;
  /** Handler ids to run; undefined runs every loaded handler. */
  readonly handlers: readonly string[] | undefined;
  readonly workspaceApiUrl: string | undefined;
  readonly workspaceApiToken: string | undefined;
  /** Requests allowed per 10 s for the API token. */
  readonly workspaceApiBurst: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly admin: { readonly user: string; readonly password: string } | undefined;
  /** Run the ingest pump (inbox → `events` queue) in this process: `auto` = where a worker runs. */
  readonly ingestPump: 'auto' | 'on' | 'off';
  /** Port of the `/metrics` server of a process without a receiver (`work`); undefined: none. */
  readonly metricsPort: number | undefined;
  readonly workerConcurrency: number;
  /** BullMQ lock of an active job; a crashed worker's job is run again after it lapses. */
  readonly jobLockMs: number;
  readonly shutdownTimeoutMs: number;
  /** Directory for local state (managed Redis data). */
  readonly stateDir: string;
  /** OpenTelemetry export (the standard OTEL_EXPORTER_OTLP_* variables); undefined: tracing off. */
  readonly tracing: TracingSettings | undefined;
  /** Interval of the poller of derived events (order.created, order.status_changed, task.due). */
  readonly pollEveryMs: number;
  /** `task.due` fires this long before a task's due_at (0: when it passes). */
  readonly taskDueLookaheadMs: number;
  /**
   * Per-delivery history (`switchyard trace`, `deliveries`): on/off, how long it is kept, whether redacted bodies are kept
   * (HISTORY_BODIES, shown by `trace`), and how long each delivery's exact body is kept for `deliveries --where` and
   * `rerun` (KEEP_BODIES, ms; 0: none kept; `keepBodiesSet`: KEEP_BODIES was given, not defaulted to HISTORY_TTL).
   */
  readonly history: {
    readonly enabled: boolean;
    readonly ttlMs: number;
    readonly bodies: boolean;
    readonly keepBodiesMs: number;
    readonly keepBodiesSet: boolean;
  };
  /**
   * Scheduled reconcile (src/reconcile): every `everyMs` (undefined: off), over the last `windowMs`; `budget`: share of the API burst;
   * `snapshotEveryMs`: how often workers refresh the snapshot of event fields (SNAPSHOT_EVERY; undefined: off).
   */
  readonly reconcile: {
    readonly everyMs: number | undefined;
    readonly windowMs: number;
    readonly budget: number;
    readonly snapshotEveryMs?: number | undefined;
  };
  /** `switchyard rerun` batches: `share` of the API burst their runs may use (RERUN_SHARE; own window, low priority). */
  readonly rerun: { readonly share: number };
}

/** Every configuration problem at once; `message` lists each variable and what it expects. */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(readonly problems: readonly { variable: string; problem: string }[]) {
    super('Invalid configuration:\n' + problems.map((p) => `  - ${p.variable}: ${p.problem}`).join('\n'));
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** `serve`/`start` need webhook secrets; `work`, `replay`, `doctor` may run without. */
  requireSecrets?: boolean;
  /**
   * Processes that run handlers (`start`, `work`, `dev`): a WORKSPACE_API_URL
   * without a token would dead-letter every run that calls the API, so it is
   * refused at start-up, naming WORKSPACE_API_TOKEN.
   */
  requireApiToken?: boolean;
}

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const int = (name: string, def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max} (default ${def}), got "${v}"` });
        return z.NEVER;
      }
      return n;
    })
    .describe(name);

const duration = (def: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const ms = parseDuration(v && v.trim() !== '' ? v : def);
      if (ms === null || ms <= 0) {
        ctx.addIssue({ code: 'custom', message: `expected a duration such as 7d, 12h, 30m, 45s or 500ms (default ${def}), got "${v}"` });
        return z.NEVER;
      }
      return ms;
    });

/** A duration, or undefined when unset. */
const optionalDuration = optionalText.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const ms = parseDuration(v);
  if (ms === null || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `expected a duration such as 15m, 1h or 30s (unset: off), got "${v}"` });
    return z.NEVER;
  }
  return ms;
});

const size = (def: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const bytes = parseSize(v && v.trim() !== '' ? v : def);
      if (bytes === null || bytes <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a size in bytes or with a unit such as 512kb, 1mb, 1gb (default ${def}), got "${v}"`,
        });
        return z.NEVER;
      }
      return bytes;
    });

const bool = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return false;
    if (/^(1|true|yes|on)$/i.test(v.trim())) return true;
    if (/^(0|false|no|off)$/i.test(v.trim())) return false;
    ctx.addIssue({ code: 'custom', message: `expected true or false, got "${v}"` });
    return z.NEVER;
  });

const url = (protocols: readonly string[]) =>
  optionalText.superRefine((v, ctx) => {
    if (v === undefined) return;
    // Multi-host forms (Sentinel, Cluster) are not WHATWG URLs: check their shape instead.
    const multi = /^(redis\+sentinel|sentinel|rediss?\+cluster):\/\/(?:[^@/]*@)?([^/]+)/.exec(v);
    if (multi) {
      const hosts = (multi[2] as string).split(',');
      if (protocols.includes(multi[1] as string) && hosts.every((h) => /^[^:\s]+(:\d+)?$/.test(h))) return;
      ctx.addIssue({
        code: 'custom',
        message: 'expected host:port pairs separated by commas, e.g. redis+cluster://10.0.0.1:7000,10.0.0.2:7001',
      });
      return;
    }
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: `expected a URL (${protocols.join(', ')}), got an unparseable value` });
      return;
    }
    if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
      ctx.addIssue({ code: 'custom', message: `expected a ${protocols.join(' or ')} URL, got protocol "${parsed.protocol}"` });
    }
  });

/** One of `values` (case-insensitive), else an issue naming what was given and what is expected. */
const oneOf = <T extends string>(values: readonly T[], def: T, expected: string) =>
  optionalText.transform((v, ctx): T => {
    if (v === undefined) return def;
    const lower = v.toLowerCase() as T;
    if (values.includes(lower)) return lower;
    ctx.addIssue({ code: 'custom', message: `expected ${expected} (default ${def}), got "${v}"` });
    return z.NEVER;
  });

/** Text with a default that must pass `ok`, else an issue naming what was given. */
const checked = (def: string, ok: (v: string) => boolean, expected: string, map: (v: string) => string = (v) => v) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return map(def);
    if (ok(v)) return map(v);
    ctx.addIssue({ code: 'custom', message: `${expected}, got "${v}"` });
    return z.NEVER;
  });

const csv = optionalText.transform((v) =>
  v === undefined
    ? []
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
);

const schema = z.object({
  PORT: int('PORT', 3000, 0, 65535),
  HOST: checked(
    '0.0.0.0',
    (v) => /^(\[?[0-9A-Fa-f:.]+(%\w+)?\]?|[A-Za-z0-9.-]+)$/.test(v),
    'expected an address to bind such as 127.0.0.1 (loopback only), 0.0.0.0 (every interface) or ::, without a scheme or port',
  ),
  WEBHOOK_PATH: checked('/webhooks', (v) => v.startsWith('/'), 'expected a path starting with "/", e.g. /webhooks'),
  WEBHOOK_SECRETS: csv,
  SIGNATURE_HEADER: checked(
    SIGNATURE_HEADER,
    (v) => /^[A-Za-z0-9-]+$/.test(v),
    `expected an HTTP header name such as ${SIGNATURE_HEADER}`,
    (v) => v.toLowerCase(),
  ),
  REDIS_URL: url(['redis', 'rediss', 'redis+sentinel', 'sentinel', 'redis+cluster', 'rediss+cluster', 'valkey', 'valkeys']),
  QUEUE_PREFIX: checked(
    'switchyard',
    (v) => !/\s/.test(v),
    'expected a prefix without spaces, e.g. switchyard or {switchyard} for Redis Cluster',
  ),
  DEDUPE_TTL: duration('7d'),
  MAX_BODY_BYTES: size('1048576'),
  BODY_TIMEOUT: duration('10s'),
  SPOOL_DIR: optionalText,
  SPOOL_MAX_BYTES: size('1gb'),
  CAPTURE_DIR: optionalText,
  CAPTURE_REDACT: bool,
  HANDLERS_DIR: optionalText.transform((v) => v ?? './handlers'),
  HANDLERS: csv.transform((ids) => (ids.length === 0 ? undefined : ids)),
  WORKSPACE_API_URL: url(['http', 'https']),
  WORKSPACE_API_TOKEN: optionalText,
  WORKSPACE_API_BURST: int('WORKSPACE_API_BURST', 30, 1, 10_000),
  LOG_LEVEL: oneOf(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
    'info',
    'one of fatal, error, warn, info, debug, trace, silent',
  ),
  ADMIN_USER: optionalText,
  ADMIN_PASSWORD: optionalText,
  WORKER_CONCURRENCY: int('WORKER_CONCURRENCY', 10, 1, 1000),
  METRICS_PORT: int('METRICS_PORT', -1, 0, 65535),
  INGEST_PUMP: oneOf(['auto', 'on', 'off'] as const, 'auto', 'auto (pump where a worker runs), on or off'),
  JOB_LOCK_DURATION: duration('30s'),
  SHUTDOWN_TIMEOUT: duration('10s'),
  SWITCHYARD_HOME: optionalText.transform((v) => v ?? '.switchyard'),
  POLL_EVERY: duration('1m'),
  TASK_DUE_LOOKAHEAD: optionalText.transform((v, ctx) => {
    const ms = parseDuration(v ?? '0s');
    if (ms === null || ms < 0)
      ctx.addIssue({ code: 'custom', message: `expected a duration such as 0s, 15m or 1h (default 0s), got "${v}"` });
    return ms ?? 0;
  }),
  HISTORY: oneOf(['on', 'off', 'true', 'false'] as const, 'on', 'on or off'),
  HISTORY_TTL: duration('7d'),
  HISTORY_BODIES: bool,
  KEEP_BODIES: optionalText.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const ms = v.toLowerCase() === 'off' ? 0 : parseDuration(v);
    if (ms === null) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration such as 7d, 48h or 30m, or 0 (or off) to keep no body (default: HISTORY_TTL), got "${v}"`,
      });
      return z.NEVER;
    }
    return ms;
  }),
  RECONCILE_EVERY: optionalDuration,
  RECONCILE_WINDOW: optionalDuration,
  SNAPSHOT_EVERY: optionalText.transform((v, ctx) => {
    if (v === 'off') return undefined;
    const ms = parseDuration(v ?? '5m');
    if (ms === null || ms < 1_000) {
      ctx.addIssue({ code: 'custom', message: `expected a duration of at least 1s such as 5m, or off (default 5m), got "${v}"` });
      return z.NEVER;
    }
    return ms;
  }),
  RECONCILE_BUDGET: checked(
    '0.2',
    (v) => Number(v) > 0 && Number(v) <= 1,
    'expected a share of the API burst above 0 and at most 1, such as 0.2 (default 0.2)',
    (v) => v,
  ).transform(Number),
  WORKSPACES_FILE: optionalText,
  RERUN_SHARE: checked(
    '0.5',
    (v) => Number(v) > 0 && Number(v) <= 1,
    'expected a share of the API burst above 0 and at most 1, such as 0.5 (default 0.5)',
    (v) => v,
  ).transform(Number),
});

type Env = Record<string, string | undefined>;

/** Reads `NAME_FILE` (a container secret) into `NAME` when `NAME` itself is unset. */
function resolveFileSecrets(env: Env, problems: { variable: string; problem: string }[]): Env {
  const out: Env = { ...env };
  for (const name of ['WEBHOOK_SECRETS', 'WORKSPACE_API_TOKEN']) {
    const file = env[`${name}_FILE`];
    if (!file || (env[name] ?? '').trim() !== '') continue;
    try {
      out[name] = readFileSync(file, 'utf8')
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean)
        .join(',');
    } catch (err) {
      problems.push({
        variable: `${name}_FILE`,
        problem: `cannot read "${file}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); expected a readable file holding the value`,
      });
    }
  }
  return out;
}

/**
 * Validates the environment and returns a frozen Config, or throws a
 * ConfigError naming every problem. Secret values never appear in messages.
 */
export function loadConfig(env: Env, options: LoadConfigOptions = {}): Config {
  const problems: { variable: string; problem: string }[] = [];
  const resolved = resolveFileSecrets(env, problems);
  const parsed = schema.safeParse(resolved);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push({ variable: String(issue.path[0] ?? '?'), problem: issue.message });
    }
  }
  const v = parsed.success ? parsed.data : undefined;
  checkRequirements(resolved, options, problems, env);
  const tracing = tracingSettings(resolved, problems);
  if (v && v.KEEP_BODIES !== undefined && v.KEEP_BODIES > v.HISTORY_TTL) {
    problems.push({
      variable: 'KEEP_BODIES',
      problem: `expected at most HISTORY_TTL (${formatDuration(v.HISTORY_TTL)}): a kept body is found through its delivery's history, got "${formatDuration(v.KEEP_BODIES)}"`,
    });
  }
  // Read also when another variable is wrong: every problem at once (the burst matters only when none is).
  const workspacesFile = (resolved['WORKSPACES_FILE'] ?? '').trim();
  const workspaces = workspacesFile
    ? readWorkspacesFile(workspacesFile, resolved, { burst: v?.WORKSPACE_API_BURST ?? 0 }, problems)
    : undefined;
  if (problems.length > 0 || !v) throw new ConfigError(problems);
  return configFrom(v, tracing, workspaces);
}

/** The Config of a parsed environment. */
function configFrom(v: z.output<typeof schema>, tracing: TracingSettings | undefined, workspaces: WorkspaceSpec[] | undefined): Config {
  return Object.freeze<Config>({
    workspaceId: DEFAULT_WORKSPACE,
    workspaceWeight: 1,
    workspaces: workspaces ? Object.freeze(workspaces) : undefined,
    workspacesFile: workspaces ? v.WORKSPACES_FILE : undefined,
    port: v.PORT,
    host: v.HOST,
    webhookPath: v.WEBHOOK_PATH,
    webhookSecrets: Object.freeze([...v.WEBHOOK_SECRETS]),
    signatureHeader: v.SIGNATURE_HEADER,
    redisUrl: v.REDIS_URL,
    queuePrefix: v.QUEUE_PREFIX,
    dedupeTtlMs: v.DEDUPE_TTL,
    maxBodyBytes: v.MAX_BODY_BYTES,
    bodyTimeoutMs: v.BODY_TIMEOUT,
    spoolDir: v.SPOOL_DIR,
    spoolMaxBytes: v.SPOOL_MAX_BYTES,
    captureDir: v.CAPTURE_DIR,
    captureRedact: v.CAPTURE_REDACT,
    handlersDir: v.HANDLERS_DIR,
    handlers: v.HANDLERS ? Object.freeze([...v.HANDLERS]) : undefined,
    workspaceApiUrl: v.WORKSPACE_API_URL,
    workspaceApiToken: v.WORKSPACE_API_TOKEN,
    workspaceApiBurst: v.WORKSPACE_API_BURST,
    logLevel: v.LOG_LEVEL,
    admin: v.ADMIN_USER && v.ADMIN_PASSWORD ? Object.freeze({ user: v.ADMIN_USER, password: v.ADMIN_PASSWORD }) : undefined,
    metricsPort: v.METRICS_PORT >= 0 ? v.METRICS_PORT : undefined,
    ingestPump: v.INGEST_PUMP,
    workerConcurrency: v.WORKER_CONCURRENCY,
    jobLockMs: v.JOB_LOCK_DURATION,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT,
    stateDir: v.SWITCHYARD_HOME,
    tracing,
    pollEveryMs: v.POLL_EVERY,
    taskDueLookaheadMs: v.TASK_DUE_LOOKAHEAD,
    history: Object.freeze({
      enabled: v.HISTORY === 'on' || v.HISTORY === 'true',
      ttlMs: v.HISTORY_TTL,
      bodies: v.HISTORY_BODIES,
      keepBodiesMs: v.KEEP_BODIES ?? v.HISTORY_TTL,
      keepBodiesSet: v.KEEP_BODIES !== undefined,
    }),
    reconcile: Object.freeze({
      everyMs: v.RECONCILE_EVERY,
      windowMs: v.RECONCILE_WINDOW ?? 2 * (v.RECONCILE_EVERY ?? 900_000),
      budget: v.RECONCILE_BUDGET,
      snapshotEveryMs: v.SNAPSHOT_EVERY,
    }),
    rerun: Object.freeze({ share: v.RERUN_SHARE }),
  });
}
