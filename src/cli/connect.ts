import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WorkspaceChoiceError, loadConfig, selectWorkspace, type Config } from '../config/index.js';
import { connectForCommand, type RedisClient } from '../redis/index.js';
import { IngestStore } from '../queue/index.js';
import { directTarget, httpTarget, type ReplayTarget } from '../replay/index.js';
import { UsageError, type CliIo } from './command.js';
import { urlFlag } from './flags.js';
import { liveReceiver } from './live-receiver.js';
import { DEV_WORKSPACES_FILE } from './dev-workspaces.js';

/**
 * The configuration of a one-shot command (a ConfigError reaches main.ts: every problem printed, exit 1): that of
 * the workspace `--workspace` names (`workspace`, see WORKSPACE_OPTION), the deployment's own in a deployment of one.
 * A workspace it cannot choose (none given among several, an unknown id) is a UsageError (exit 2) listing the ids.
 */
export function cliConfig(io: CliIo, workspace?: string): Config {
  return chooseWorkspace(loadConfig(devWorkspacesEnv(io), { requireSecrets: false }), workspace);
}

/** The variables a configuration of its own sets: with any of them, a running `dev`'s workspaces are not used. */
const OWN_SETUP = ['WORKSPACES_FILE', 'WORKSPACE_API_URL', 'WEBHOOK_SECRETS', 'WEBHOOK_SECRETS_FILE', 'REDIS_URL'];

/**
 * Next to a running `switchyard dev --workspaces N` (it keeps its workspaces in `<SWITCHYARD_HOME>/dev-workspaces.json`
 * while it runs), a command in another terminal serves the same workspaces without set-up, as it finds dev's managed
 * Redis and secret: the environment with WORKSPACES_FILE pointing there (said on stderr). An environment with a set-up
 * of its own is left as it is.
 */
function devWorkspacesEnv(io: Pick<CliIo, 'env' | 'cwd' | 'stderr'>): CliIo['env'] {
  if (OWN_SETUP.some((name) => (io.env[name] ?? '').trim() !== '')) return io.env;
  const stateDir = io.env['SWITCHYARD_HOME']?.trim() || '.switchyard';
  const file = resolve(io.cwd, stateDir, DEV_WORKSPACES_FILE);
  // Only while that dev runs: a file a killed one left behind is not a set-up.
  if (!existsSync(file) || liveReceiver({ stateDir }, io.cwd)?.command !== 'dev') return io.env;
  io.stderr.write(`using the workspaces of the running switchyard dev (${file})\n`);
  return { ...io.env, WORKSPACES_FILE: file };
}

/** `selectWorkspace` for a command line: a choice it cannot make is a UsageError (exit 2, with the usage). */
export function chooseWorkspace(config: Config, workspace: string | undefined): Config {
  try {
    return selectWorkspace(config, workspace);
  } catch (err) {
    if (err instanceof WorkspaceChoiceError) throw new UsageError(err.message);
    throw err;
  }
}

/** A file of the local state directory (SWITCHYARD_HOME, relative to the working directory), trimmed; null when absent or empty. */
function stateFile(config: Pick<Config, 'stateDir'>, cwd: string, name: string): string | null {
  try {
    return readFileSync(resolve(cwd, config.stateDir, name), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/**
 * The Redis a one-shot command (dlq, send/replay --direct) should use:
 * REDIS_URL, else the URL a running `switchyard start` with a managed
 * redis-server left in `<SWITCHYARD_HOME>/redis.url`, else null.
 */
export function cliRedisUrl(config: Pick<Config, 'redisUrl' | 'stateDir'>, cwd = process.cwd()): string | null {
  return config.redisUrl ?? stateFile(config, cwd, 'redis.url');
}

/**
 * The signing secret of `send`, `replay` and `sign`: `--secret`, else the
 * current (first) of WEBHOOK_SECRETS, else the development secret `npm run dev`
 * keeps in `<SWITCHYARD_HOME>/dev-secret` (said on stderr, so a second terminal
 * next to `npm run dev` needs no set-up).
 */
export function signingSecret(value: string | undefined, config: Config, io: Pick<CliIo, 'cwd' | 'stderr'>): string {
  const secret = value ?? config.webhookSecrets[0];
  if (secret) return secret;
  const dev = stateFile(config, io.cwd, 'dev-secret');
  if (dev) {
    const secretFile = join(config.stateDir, 'dev-secret');
    io.stderr.write(`note: WEBHOOK_SECRETS is unset; signing with the development secret of \`npm run dev\` (${secretFile})\n`);
    return dev.split(',')[0]?.trim() as string;
  }
  const secretFile = join(config.stateDir, 'dev-secret');
  throw new UsageError(
    `--secret: no signing secret; pass --secret, set WEBHOOK_SECRETS, or start \`npm run dev\` (it keeps one in ${secretFile})`,
  );
}

/** No Redis to use: not an argument problem (no usage text); says what to set or start. Exit 1. */
export class RedisNotFoundError extends Error {
  readonly code = 'redis_not_found';
  constructor(message: string) {
    super(message);
    this.name = 'RedisNotFoundError';
  }
}

/**
 * Connects to the Redis of the receivers and workers through the one
 * connection factory (every REDIS_URL form: standalone, TLS, Sentinel,
 * Cluster); `missing` says what to set when there is no URL at all. A URL
 * left by `npm run dev` / `switchyard start` that no longer answers says so.
 */
export async function cliRedis(config: Config, missing: string, cwd = process.cwd()): Promise<RedisClient> {
  const url = cliRedisUrl(config, cwd);
  if (!url) throw new RedisNotFoundError(missing);
  try {
    return await connectForCommand(url);
  } catch (err) {
    if (config.redisUrl || !(err instanceof Error)) throw err;
    const urlFile = join(config.stateDir, 'redis.url');
    const question = `the managed Redis named in ${urlFile}: is \`npm run dev\` / \`switchyard start\` still running here?`;
    throw new RedisNotFoundError(`${err.message} (${question}). ${missing}`);
  }
}

/**
 * The webhook URL of a `dev`/`start` running in this project (its port need not be this shell's),
 * unless PORT or WEBHOOK_PATH is set here: an explicit setting wins. Said on stderr.
 */
function liveUrl(config: Config, io: Pick<CliIo, 'cwd' | 'stderr' | 'env'>): string | undefined {
  if (io.env['PORT'] !== undefined || io.env['WEBHOOK_PATH'] !== undefined) return undefined;
  const live = liveReceiver(config, io.cwd);
  if (!live) return undefined;
  const receiverFile = join(config.stateDir, 'receiver.json');
  // Its URL is the deployment's WEBHOOK_PATH: a workspace of many is received at <WEBHOOK_PATH>/<id>.
  const url = config.workspaces ? `${live.url.replace(/\/+$/, '')}/${config.workspaceId}` : live.url;
  const running = `the running switchyard ${live.command} here (pid ${live.pid}) at ${url} (${receiverFile})`;
  io.stderr.write(`note: delivering to ${running}; --to or PORT to send elsewhere\n`);
  return url;
}

/** Where `send` and `replay` deliver, and how to let go of it. */
export interface DeliveryTarget {
  readonly target: ReplayTarget;
  /** A closure (no `this`): may be taken off the object. */
  readonly close: () => Promise<void>;
}

/**
 * `--direct`: into Redis with the receiver's dedupe; else signed HTTP POSTs to
 * `--to` (default the local receiver of PORT and WEBHOOK_PATH).
 */
export async function deliveryTarget(
  config: Config,
  flags: { direct: boolean; to?: string | undefined; secret?: string | undefined; concurrency?: number },
  io: Pick<CliIo, 'cwd' | 'stderr' | 'env'>,
): Promise<DeliveryTarget> {
  if (flags.direct) {
    if (flags.to !== undefined) throw new UsageError('--to applies to HTTP delivery only (not with --direct)');
    const needsRedis =
      '--direct needs REDIS_URL (the Redis your receiver and workers use), ' +
      'or a running `npm run dev` / `switchyard start` with its managed Redis';
    const redis = await cliRedis(config, needsRedis, io.cwd);
    return {
      target: directTarget(new IngestStore(redis, config.queuePrefix, config.dedupeTtlMs)),
      close: async () => {
        redis.disconnect();
      },
    };
  }
  const target = httpTarget({
    url: urlFlag('to', flags.to ?? liveUrl(config, io) ?? `http://127.0.0.1:${config.port}${config.webhookPath}`),
    secret: signingSecret(flags.secret, config, io),
    signatureHeader: config.signatureHeader,
    ...(flags.concurrency ? { maxSockets: flags.concurrency } : {}),
  });
  return { target, close: async () => target.close() };
}
