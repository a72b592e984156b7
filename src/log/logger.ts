import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { EMAIL_FIELDS, maskPersonalText, PHONE_FIELDS } from '../pii/index.js';

export type { Logger } from 'pino';

/**
 * Paths whose values are secrets or personal data. pino's `redact` replaces
 * them before serialisation; `redactText` below covers free text (messages).
 */
export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'password',
  '*.password',
  'signature',
  '*.signature',
  '*.headers["x-service-signature"]',
  'headers["x-service-signature"]',
  ...[...PHONE_FIELDS, ...EMAIL_FIELDS].flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
];

/**
 * Masks emails and phone numbers inside free text. Only numbers that look like
 * phone numbers are masked (see src/pii/mask.ts): addresses, ports, ids, timestamps
 * and versions stay readable.
 */
export function redactText(text: string): string {
  return maskPersonalText(text);
}

/** Fields that carry free text (error messages, a service's 422 details): emails and phones are masked in them too. */
const FREE_TEXT_FIELDS = ['reason', 'err', 'error', 'detail', 'cause', 'stack'] as const;

function redactFreeText(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (typeof o['message'] === 'string' || typeof o['stack'] === 'string') {
      return {
        ...o,
        ...(typeof o['message'] === 'string' ? { message: redactText(o['message']) } : {}),
        ...(typeof o['stack'] === 'string' ? { stack: redactText(o['stack']) } : {}),
      };
    }
  }
  return value;
}

/** Masks emails and phone numbers in the free-text fields of a log object. */
function redactFields(obj: Record<string, unknown>): Record<string, unknown> {
  let out = obj;
  for (const f of FREE_TEXT_FIELDS) {
    if (obj[f] === undefined) continue;
    const v = redactFreeText(obj[f]);
    if (v !== obj[f]) out = out === obj ? { ...obj, [f]: v } : Object.assign(out, { [f]: v });
  }
  return out;
}

export interface CreateLoggerOptions {
  level?: LoggerOptions['level'];
  /** Pretty output (a TTY); JSON otherwise. */
  pretty?: boolean;
  destination?: DestinationStream;
  name?: string;
}

/** The process logger: JSON lines on stdout, pretty on a TTY, secrets and PII redacted. */
export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? 'info',
    name: opts.name ?? 'switchyard',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }), log: redactFields },
    hooks: {
      logMethod(args, method) {
        const redacted = args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as Parameters<typeof method>;
        method.apply(this, redacted);
      },
    },
  };
  if (opts.destination) return pino(options, opts.destination);
  if (opts.pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  // Asynchronous stdout: a log line never blocks a webhook answer; pino flushes
  // what is pending when the process exits (lines of a SIGKILLed process may be lost).
  return pino(options, pino.destination({ dest: 1, sync: false }));
}
