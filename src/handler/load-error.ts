import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, extname, isAbsolute, relative } from 'node:path';
import { moduleFormat } from './module-import.js';

/** Where in a file something went wrong: 1-based line and column. */
interface Location {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

const MAX_MESSAGE_LINES = 6;

/**
 * Why a handler module could not be loaded, for a person: `file:line:column`,
 * the message and, for a syntax error, a short code frame; never a stack.
 * `shown` is the file as the message names it.
 */
export function describeLoadFailure(file: string, shown: string, err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  const source = readSource(file);
  const helper = isSyntaxError(e) ? failingImport(e, file) : undefined;
  if (helper) return `${describeLoadFailure(helper, display(helper), e)}\n(imported by ${shown})`;
  if (isSyntaxError(e)) {
    const at = syntaxLocation(e, file, source);
    const message = at?.message ?? firstLine(e.message.replace(/^Transform failed with \d+ errors?:\s*/, ''));
    const where = at ? `${shown}:${at.line}:${at.column}` : shown;
    const frame = at && source !== undefined ? `\n${codeFrame(source, at)}` : '';
    return `${where}: syntax error: ${message}${hint(file, message)}${frame}`;
  }
  const at = stackLocation(e, file);
  const message = e.message.split('\n').slice(0, MAX_MESSAGE_LINES).join('\n').trim();
  return `${at ? `${shown}:${at.line}:${at.column}` : shown}: ${message}${hint(file, message)}`;
}

function isSyntaxError(e: Error): boolean {
  // The ES module loader's hooks run on their own thread: compare names, not classes.
  return e.name === 'SyntaxError' || e.name === 'TransformError' || /^Transform failed with \d+ error/.test(e.message);
}

function readSource(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The module esbuild (tsx) could not compile when it is not `file` but one `file` imports. */
function failingImport(e: Error, file: string): string | undefined {
  const named = /^(.+?)(?:\?[^:\n]*)?:\d+:\d+: ERROR: /m.exec(e.message)?.[1];
  return named && named !== file && isAbsolute(named) && existsSync(named) ? named : undefined;
}

/** A file as messages name it: relative to the working directory when inside it. */
function display(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

const firstLine = (s: string): string =>
  s
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim() ?? s;

/**
 * The location of a syntax error: from esbuild's message (tsx), from the
 * header of a CommonJS compile error (`file:line` and a caret), else by
 * parsing the file with esbuild (an ES module's SyntaxError carries none).
 */
function syntaxLocation(e: Error, file: string, source: string | undefined): Location | undefined {
  const esbuild = /:(\d+):(\d+): ERROR: (.+)/.exec(e.message);
  if (esbuild && source !== undefined) {
    const line = Number(esbuild[1]);
    return { line, column: byteToColumn(source, line, Number(esbuild[2])), message: esbuild[3]!.trim() };
  }
  const header = new RegExp(`^${escape(file)}:(\\d+)\\n(.*)\\n( *)\\^`).exec(e.stack ?? '');
  if (header) return { line: Number(header[1]), column: header[3]!.length + 1, message: e.message };
  return source === undefined ? undefined : parseWithEsbuild(file, source);
}

interface EsbuildMessage {
  text: string;
  location: { line: number; column: number } | null;
}
interface Esbuild {
  transformSync(code: string, opts: Record<string, unknown>): unknown;
}

/** esbuild (tsx's own dependency) parses the file again to find what Node's error left out. */
function parseWithEsbuild(file: string, source: string): Location | undefined {
  let esbuild: Esbuild;
  try {
    const here = createRequire(import.meta.url);
    esbuild = createRequire(here.resolve('tsx/package.json'))('esbuild') as Esbuild;
  } catch {
    return undefined;
  }
  try {
    esbuild.transformSync(source, { loader: /\.[mc]?ts$/.test(file) ? 'ts' : 'js', sourcefile: file, logLevel: 'silent' });
    return undefined;
  } catch (err) {
    const first = (err as { errors?: EsbuildMessage[] }).errors?.[0];
    if (!first?.location) return undefined;
    const { line, column } = first.location;
    return { line, column: byteToColumn(source, line, column), message: first.text };
  }
}

/** esbuild counts columns in UTF-8 bytes from 0; people count characters from 1. */
function byteToColumn(source: string, line: number, byteColumn: number): number {
  const text = source.split('\n')[line - 1] ?? '';
  return Buffer.from(text, 'utf8').subarray(0, byteColumn).toString('utf8').length + 1;
}

/** The first frame of the stack that is in `file` (tsx maps TypeScript positions back to the source). */
function stackLocation(e: Error, file: string): Omit<Location, 'message'> | undefined {
  const m = new RegExp(`(?:file://)?${escape(file)}:(\\d+):(\\d+)`).exec(e.stack ?? '');
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The failing line with one line either side and a caret under the column. */
export function codeFrame(source: string, at: Omit<Location, 'message'>): string {
  const lines = source.split(/\r?\n/);
  const first = Math.max(1, at.line - 1);
  const last = Math.min(lines.length, at.line + 1);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const text = (lines[n - 1] ?? '').replace(/\t/g, ' ').slice(0, 200);
    out.push(`${n === at.line ? '>' : ' '} ${String(n).padStart(width)} | ${text}`);
    if (n === at.line) out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, at.column - 1))}^`);
  }
  return out.join('\n');
}

/** What to change when the module system is the problem. */
function hint(file: string, message: string): string {
  const name = basename(file);
  const ts = /ts$/.test(extname(file));
  const esmSyntax = /Top-level await|import statement outside a module|Unexpected token 'export'|import\.meta/.test(message);
  if (moduleFormat(file) === 'commonjs' && esmSyntax) {
    const esmExtension = ts ? '.mts' : '.mjs';
    return /\.c[jt]s$/.test(file)
      ? `\n(${name} is CommonJS by its extension: ` +
          `rename it to ${esmExtension} to make it an ES module, or use require() and module.exports)`
      : `\n(${name} is loaded as CommonJS because the nearest package.json has no "type": "module": ` +
          `rename it to ${esmExtension}, or set "type": "module" in that package.json)`;
  }
  if (moduleFormat(file) === 'module' && /\b(require|module|exports) is not defined/.test(message) && !/\.cjs/.test(message)) {
    const cjsExtension = ts ? '.cts' : '.cjs';
    return `\n(${name} is loaded as an ES module: use import and export default, or rename it to ${cjsExtension} to make it CommonJS)`;
  }
  return '';
}
