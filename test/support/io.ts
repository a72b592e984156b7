import { PassThrough, Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/command.js';

/** A CliIo whose output is kept in memory, for running commands without spawning. */
export function memoryIo(env: Record<string, string | undefined>, opts: { tty?: boolean } = {}): CliIo & { out(): string; err(): string } {
  let out = '';
  let err = '';
  const stdout = Object.assign(new Writable({ write(c, _e, cb) { out += String(c); cb(); } }), { isTTY: opts.tty ?? false });
  const stderr = Object.assign(new Writable({ write(c, _e, cb) { err += String(c); cb(); } }), { isTTY: opts.tty ?? false });
  return { stdout, stderr, stdin: new PassThrough(), env, cwd: process.cwd(), stopSignal: new AbortController().signal, out: () => out, err: () => err };
}
