import { Readable, Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/command.js';

export interface MemoryIo extends CliIo {
  out(): string;
  err(): string;
}

/** A CliIo whose output is kept in memory; stdin from `input`. */
export function memoryIo(env: Record<string, string | undefined>, opts: { input?: string | Buffer; tty?: boolean; cwd?: string } = {}): MemoryIo {
  let out = '';
  let err = '';
  const stdout = Object.assign(new Writable({ write(c, _e, cb) { out += String(c); cb(); } }), { isTTY: opts.tty ?? false });
  const stderr = Object.assign(new Writable({ write(c, _e, cb) { err += String(c); cb(); } }), { isTTY: opts.tty ?? false });
  return {
    stdout, stderr, stdin: Readable.from(opts.input === undefined ? [] : [Buffer.from(opts.input)]),
    env, cwd: opts.cwd ?? process.cwd(), stopSignal: new AbortController().signal,
    out: () => out, err: () => err,
  };
}
