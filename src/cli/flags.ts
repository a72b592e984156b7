import { isEventName, suggestEventName } from '../events/catalogue.js';
import { UsageError } from './command.js';

/** `--event a,b --event c`, each checked against the catalogue. */
export function eventFlags(values: readonly string[]): string[] {
  const names = values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
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
