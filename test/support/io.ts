import { Readable, Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/command.js';
import { hermeticHome } from './hermetic.js';

export interface MemoryIo extends CliIo {
  out(): string;
  err(): string;
}

/**
 * A CliIo whose output is kept in memory; stdin from `input`. Without a
 * `cwd` of the test's own (a project directory) or SWITCHYARD_HOME in `env`,
 * its state directory is the test process's own temporary one (never the
 * repository's `.switchyard/`).
 */
export function memoryIo(
  env: Record<string, string | undefined>,
  opts: { input?: string | Buffer; tty?: boolean; cwd?: string } = {},
): MemoryIo {
  let out = '';
  let err = '';
  const stdout = Object.assign(
    new Writable({
      write(c, _e, cb) {
        out += String(c);
        cb();
      },
    }),
    { isTTY: opts.tty ?? false },
  );
  const stderr = Object.assign(
    new Writable({
      write(c, _e, cb) {
        err += String(c);
        cb();
      },
    }),
    { isTTY: opts.tty ?? false },
  );
  return {
    stdout,
    stderr,
    stdin: Readable.from(opts.input === undefined ? [] : [Buffer.from(opts.input)]),
    env: opts.cwd !== undefined || 'SWITCHYARD_HOME' in env ? env : { SWITCHYARD_HOME: hermeticHome(), ...env },
    cwd: opts.cwd ?? process.cwd(),
    stopSignal: new AbortController().signal,
    out: () => out,
    err: () => err,
  };
}
