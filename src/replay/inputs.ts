import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { Fixture, fixtureBytes } from '../events/index.js';

/** One delivery to replay: its exact bytes and where it came from. */
export interface ReplayItem {
  /** `file` or `file:line` (ndjson), for messages. */
  readonly source: string;
  readonly bytes: Buffer;
  /** Headers recorded with a fixture (never signatures); empty for plain event JSON. */
  readonly headers: Readonly<Record<string, string>>;
  /** The fixture's `received_at`, when it has one. */
  readonly receivedAt: string | undefined;
}

/** An input that is neither a fixture nor plain event JSON; replay stops before sending anything. */
export class InputError extends Error {
  readonly code = 'replay_input';
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

/** True for a fixture object (`headers`/`body`/`body_base64`/`format`) rather than a bare envelope. */
function looksLikeFixture(json: unknown): boolean {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const o = json as Record<string, unknown>;
  return (
    o['format'] !== undefined ||
    typeof o['body'] === 'string' ||
    typeof o['body_base64'] === 'string' ||
    (typeof o['headers'] === 'object' && o['headers'] !== null && !('event' in o) && !('data' in o))
  );
}

/**
 * Turns one JSON text into a replay item. A fixture yields its exact body
 * bytes (`fixtureBytes`); anything else is plain event JSON and is replayed as
 * exactly the bytes given. A malformed fixture is an error naming `source`.
 */
export function itemFromText(source: string, text: Buffer): ReplayItem {
  let json: unknown;
  try {
    json = JSON.parse(text.toString('utf8'));
  } catch {
    throw new InputError(`${source}: not valid JSON (expected a fixture or an event envelope)`);
  }
  if (!looksLikeFixture(json)) return { source, bytes: text, headers: {}, receivedAt: undefined };
  const parsed = Fixture.safeParse(json);
  if (!parsed.success) {
    throw new InputError(
      `${source}: not a valid fixture: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
  return { source, bytes: fixtureBytes(parsed.data), headers: parsed.data.headers, receivedAt: parsed.data.received_at };
}

/** Trailing line breaks an editor adds to a plain file are not part of the event. */
function trimTrailingNewlines(buf: Buffer): Buffer {
  let end = buf.length;
  while (end > 0 && (buf[end - 1] === 0x0a || buf[end - 1] === 0x0d)) end--;
  return buf.subarray(0, end);
}

/** Items of one file: `.ndjson` one per non-empty line, anything else one per file. */
export function itemsFromFile(file: string, content: Buffer): ReplayItem[] {
  if (extname(file) === '.ndjson' || extname(file) === '.jsonl') {
    const items: ReplayItem[] = [];
    let start = 0;
    let line = 1;
    for (let i = 0; i <= content.length; i++) {
      if (i === content.length || content[i] === 0x0a) {
        let end = i;
        if (end > start && content[end - 1] === 0x0d) end--;
        const slice = content.subarray(start, end);
        if (slice.toString('utf8').trim() !== '') items.push(itemFromText(`${file}:${line}`, slice));
        start = i + 1;
        line++;
      }
    }
    return items;
  }
  return [itemFromText(file, trimTrailingNewlines(content))];
}

/**
 * A directory a directory walk does not descend into: its name starts with
 * `_` or `.` (`fixtures/_malformed/`, `.git/`). Named as an argument, it is read.
 */
export const isSkippedDir = (name: string): boolean => name.startsWith('_') || name.startsWith('.');

async function walk(dir: string, out: string[], skipped: string[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (isSkippedDir(e.name)) skipped.push(full);
      else await walk(full, out, skipped);
    } else if (e.isFile() && /\.(json|ndjson|jsonl)$/.test(e.name) && !/^readme/i.test(e.name)) out.push(full);
  }
}

/**
 * Files named by the arguments: files as given, directories recursively
 * (`*.json`, `*.ndjson`), in name order; `skipped` lists the subdirectories
 * left out (see `isSkippedDir`).
 */
export async function expandInputs(paths: readonly string[], cwd: string): Promise<{ files: string[]; skipped: string[] }> {
  const files: string[] = [];
  const skipped: string[] = [];
  for (const p of paths) {
    const full = resolve(cwd, p);
    let s;
    try {
      s = await stat(full);
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    if (s.isDirectory()) await walk(full, files, skipped);
    else files.push(full);
  }
  return { files, skipped };
}

/** Reads every input into replay items, in order; `onSkipped` hears of each subdirectory a walk left out. */
export async function readInputs(paths: readonly string[], cwd: string, onSkipped?: (dir: string) => void): Promise<ReplayItem[]> {
  const items: ReplayItem[] = [];
  const { files, skipped } = await expandInputs(paths, cwd);
  for (const dir of skipped) onSkipped?.(dir);
  for (const file of files) items.push(...itemsFromFile(file, await readFile(file)));
  return items;
}
