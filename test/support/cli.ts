import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hermeticHome } from './hermetic.js';

export const BIN = fileURLToPath(new URL('../../bin/switchyard.js', import.meta.url));
const DIST_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** End-to-end tests run the built CLI, exactly as users do. */
export function assertBuilt(): void {
  if (!existsSync(DIST_MAIN)) throw new Error('dist/ is missing: run `npm run build` (npm test does it) before the end-to-end tests');
}

export interface CliProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first line matching `re` (stdout or stderr). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Spawns `switchyard <args>` with the given environment (PATH and HOME kept). */
export function runCli(args: string[], env: Record<string, string>, cwd?: string): CliProcess {
  assertBuilt();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    // Run from the repository (no cwd): its `.switchyard/` is the developer's, so a state directory of the test's own.
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      ...(cwd === undefined ? { SWITCHYARD_HOME: hermeticHome() } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  return {
    child,
    exited,
    output: () => out,
    waitFor: (re, timeoutMs = 15_000) =>
      new Promise((res, rej) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            cleanup();
            res(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          rej(new Error(`timed out waiting for ${re}; output:\n${out}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) {
            check();
            if (listeners.has(check)) {
              cleanup();
              rej(new Error(`process exited before ${re}; output:\n${out}`));
            }
          }
        });
        check();
      }),
    stop: async (signal = 'SIGTERM', timeoutMs = 15_000) => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
