import type { Writable } from 'node:stream';

/** Exit codes shared by every command: ok, failed work, bad usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What a command may touch; injected so command logic is testable without spawning. */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM). */
  readonly stopSignal: AbortSignal;
}

/** One CLI command. Files in src/cli/ export one of these; only main.ts calls process.exit. */
export interface Command {
  readonly name: string;
  /** (Its one-line summary is in ./registry.ts, which lists the commands without loading them.) */
  /** Full `--help` text: usage, options, at least one example. */
  readonly help: string;
  run(argv: readonly string[], io: CliIo): Promise<ExitCode>;
}

/** Bad arguments: main prints the message and the command's usage, exits 2. */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
