import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, assertBuilt } from './cli.js';
import { waitFor } from './wait.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A long-running `switchyard <command>` (dev, start) as a user runs it: what it printed, and the process. */
export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Waits until `re` matches the output `times` times in all. */
  waitFor(re: RegExp, times?: number, ms?: number): Promise<void>;
  /** How many times `re` matches the output so far. */
  count(re: RegExp): number;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Spawns `switchyard <command> [...args]` in `cwd`, in a process group of its own, with only PATH, HOME and `env`. */
export function startServiceProcess(
  command: string,
  cwd: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): ServiceProcess {
  assertBuilt();
  const child = spawn(process.execPath, [BIN, command, ...args], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => {
    if (child.exitCode !== null) r(child.exitCode);
    else child.once('exit', (code) => r(code));
  });
  const count = (re: RegExp): number => out.match(new RegExp(re.source, `${re.flags.replace('g', '')}g`))?.length ?? 0;
  return {
    child,
    exited,
    output: () => out,
    count,
    waitFor: async (re, times = 1, ms = 20_000) => {
      await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`switchyard ${command} exited (${child.exitCode}) before ${re}:\n${out}`);
        return count(re) >= times;
      }, ms).catch((err: unknown) => {
        throw new Error(`${String(err)}: no ${times}× ${re} in:\n${out}`);
      });
    },
  };
}

/** Runs of `switchyard dev` in one project, each stopped (and the project removed) by `stopAll`: for an `afterEach`. */
export function devRuns() {
  const running: ServiceProcess[] = [];
  return {
    /** Starts `switchyard dev [...args]` in `cwd` and waits until its receiver listens. */
    async start(cwd: string, env: Record<string, string>, args: readonly string[] = []): Promise<ServiceProcess> {
      const dev = startServiceProcess('dev', cwd, env, args);
      running.push(dev);
      await dev.waitFor(/"msg":"receiver listening"/, 1, 30_000);
      return dev;
    },
    async stopAll(project?: string): Promise<void> {
      for (const p of running.splice(0)) await stopServiceProcess(p);
      if (project) rmSync(project, { recursive: true, force: true });
    },
  };
}

/**
 * Stops the whole process group (SIGTERM, then SIGKILL after 15 s) and resolves with the exit code;
 * once the leader is gone, whatever is left of its group is killed too.
 */
export async function stopServiceProcess(p: ServiceProcess): Promise<number | null> {
  const group = p.child.pid;
  if (group === undefined) return p.child.exitCode;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      /* gone */
    }
  };
  if (p.child.exitCode === null && p.child.signalCode === null) {
    killGroup('SIGTERM');
    const t = setTimeout(() => killGroup('SIGKILL'), 15_000);
    await p.exited;
    clearTimeout(t);
  }
  killGroup('SIGKILL');
  return p.child.exitCode;
}

/** A user's project outside this repository: package.json, `handlers/`, switchyard linked in node_modules. */
export function userProject(label: string, handlers: Record<string, string>): string {
  const project = mkdtempSync(join(tmpdir(), `sy-${label}-`));
  mkdirSync(join(project, 'node_modules'));
  mkdirSync(join(project, 'handlers'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-handlers', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(handlers)) writeFileSync(join(project, 'handlers', name), text);
  return project;
}

/** Process ids of the redis-servers serving data directory `dir` (Linux: their working directory). */
export function redisServersOn(dir: string): number[] {
  const abs = resolve(dir);
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/comm`, 'utf8').trim() === 'redis-server' && readlinkSync(`/proc/${e}/cwd`) === abs;
      } catch {
        return false;
      }
    })
    .map(Number);
}
