import { isEventName, suggestEventName } from '../events/index.js';
import { readSince } from '../util/index.js';
import { UsageError } from './command.js';

/**
 * `--workspace ID` of every command that works on one workspace's data or receiver (deliveries, trace, waits, dlq,
 * reconcile, rerun, send, replay): spread into the command's options; its value goes to `cliConfig` / `withRedis`.
 */
export const WORKSPACE_OPTION = { workspace: { type: 'string' } } as const;

/** The help lines of {@link WORKSPACE_OPTION}, its text at `column` as the command's other options have it. */
export function workspaceHelp(column: number): string {
  const pad = ' '.repeat(column);
  const flag = '  --workspace ID';
  // A column too narrow for the flag (trace's): the text starts on the next line.
  return `${flag.length < column ? flag.padEnd(column) : `${flag}\n${pad}`}the workspace (WORKSPACES_FILE); needed when the file names more than one\n${pad}(\`switchyard doctor\` lists them); a deployment of one: leave it out\n`;
}

/** `--event a,b --event c`, each checked against the catalogue. */
export function eventFlags(values: readonly string[]): string[] {
  const names = values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!isEventName(n)) {
      const hint = suggestEventName(n);
      throw new UsageError(`--event: unknown event "${n}"${hint ? `; did you mean "${hint}"?` : ''} (\`switchyard events\` lists them)`);
    }
  }
  return names;
}

/** An http(s) URL flag, checked before anything is sent. */
export function urlFlag(name: string, value: string): string {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new UsageError(`--${name}: expected an http(s) URL, got "${value}"`);
  }
  return value;
}

/**
 * A time flag (`--since`, `--until`): an age back from `now` (30m, 6h, 2d) or a
 * date (UTC midnight) or a timestamp with an offset, read strictly (src/util/dates.ts); epoch ms.
 */
export function timeFlag(name: string, value: string, now = Date.now()): number {
  const t = readSince(value, now);
  if ('problem' in t) {
    throw new UsageError(
      `--${name}: ${t.problem}; expected an age such as 30m, 6h or 2d, a date YYYY-MM-DD (UTC midnight) ` +
        'or a timestamp with an offset such as 2025-03-04T10:00:00Z or 2025-03-04T10:00:00+01:00',
    );
  }
  return t.ms;
}
