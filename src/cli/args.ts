import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './command.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `parseArgs` with errors turned into UsageError (exit 2) and `--help` always known. */
export interface ParsedArgs {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

export function parseCommandArgs(argv: readonly string[], options: Options, allowPositionals = false): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
    return { values, positionals };
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.replace(/\. To specify a positional.*$/s, '') : String(err));
  }
}

/** Parses an integer flag, or explains what was expected. */
export function intFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name}: expected an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

/** A string flag's value (the last one when repeated). */
export function str(values: ParsedArgs['values'], name: string): string | undefined {
  const v = values[name];
  if (Array.isArray(v)) return v.length ? String(v[v.length - 1]) : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** A repeatable string flag's values. */
export function strs(values: ParsedArgs['values'], name: string): string[] {
  const v = values[name];
  if (Array.isArray(v)) return v.map(String);
  return typeof v === 'string' ? [v] : [];
}
