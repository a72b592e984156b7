import { createLogger, type Logger } from '../log/index.js';

/** pino's level names. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * One log line of a run as pino wrote it, parsed: `level` (its name), `msg`, the bindings (delivery, event, handler,
 * attempt) and the line's own fields.
 */
export interface LogLine {
  readonly level: LogLevel;
  readonly msg?: string;
  readonly [field: string]: unknown;
}

/**
 * The production logger (createLogger: the same redaction of secrets, emails
 * and phones) writing to memory: each line is kept as the object its JSON
 * text parses to, exactly what the worker would have printed.
 */
export function memoryLogger(level: LogLevel): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  // pino writes synchronously to a plain object stream: a line is in `lines` once the log call returns.
  const log = createLogger({
    level,
    destination: {
      write: (text: string) => {
        lines.push(JSON.parse(text) as LogLine);
      },
    },
  });
  return { log, lines };
}
