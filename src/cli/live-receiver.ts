import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { living, startTicks } from '../runtime/index.js';

/**
 * Where a running `switchyard dev` (or `start`) receives, kept in
 * `<SWITCHYARD_HOME>/receiver.json` while it runs: `send` and `replay` in
 * another terminal of the project deliver there (its port may not be this
 * shell's PORT) unless `--to`, PORT or WEBHOOK_PATH say otherwise. A file whose
 * process is gone (killed) is ignored.
 */
export interface LiveReceiver {
  readonly pid: number;
  /** The process's start time (Linux clock ticks), so a recycled pid is not taken for it. */
  readonly since?: number | undefined;
  readonly command: string;
  /** The webhook URL: `http://<host>:<port><WEBHOOK_PATH>`. */
  readonly url: string;
}

const FILE = 'receiver.json';

const fileOf = (config: Pick<Config, 'stateDir'>, cwd: string): string => join(resolve(cwd, config.stateDir), FILE);

/** Records this process's receiver; the returned function removes the record (if still this process's). */
export function recordReceiver(
  config: Pick<Config, 'stateDir' | 'webhookPath'>,
  cwd: string,
  command: string,
  baseUrl: string,
): () => void {
  const file = fileOf(config, cwd);
  const me: LiveReceiver = { pid: process.pid, since: startTicks(process.pid), command, url: `${baseUrl}${config.webhookPath}` };
  try {
    mkdirSync(dirname(file), { recursive: true }); // `start` on REDIS_URL may be the first to use the state directory
    writeFileSync(file, `${JSON.stringify(me)}\n`);
  } catch {
    return () => undefined; // no state directory can be written (read-only): other terminals fall back to PORT
  }
  return () => {
    if (readReceiver(file)?.pid === process.pid) rmSync(file, { force: true });
  };
}

function readReceiver(file: string): LiveReceiver | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<LiveReceiver>;
    return typeof r.pid === 'number' && typeof r.url === 'string' && typeof r.command === 'string' ? (r as LiveReceiver) : null;
  } catch {
    return null;
  }
}

/** The receiver of a `dev`/`start` running in this project now, or null (none recorded, or its process is gone). */
export function liveReceiver(config: Pick<Config, 'stateDir'>, cwd: string): LiveReceiver | null {
  const r = readReceiver(fileOf(config, cwd));
  return r && living({ pid: r.pid, since: r.since, command: r.command, startedAt: '' }) ? r : null;
}
