import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { projectFiles } from './init/project-files.js';

/** A directory init will not write into (not empty, without --force). */
export class InitError extends Error {
  readonly code = 'init_refused';
  constructor(message: string) {
    super(message);
    this.name = 'InitError';
  }
}

/**
 * The project's `switchyard` dependency: `--from` as npm takes it (a tarball or
 * directory path, made absolute so it holds from the new project, or a git URL
 * or version range), else this version's range.
 */
function dependencySpec(from: string | undefined, cwd: string): string | undefined {
  if (from === undefined) return undefined;
  if (from.trim() === '') throw new UsageError('--from: expected a tarball path, a git URL or a version range, got an empty value');
  const path = from.startsWith('file:') ? from.slice(5) : from;
  const local = path.startsWith('.') || path.startsWith('/') || /\.t(ar\.)?gz$/.test(path);
  return local ? `file:${resolve(cwd, path)}` : from;
}

/** npm's package-name rule, loosely: lower case, no spaces; the directory name made to fit. */
const packageName = (dir: string) => basename(dir).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '') || 'switchyard-handlers';

export const initCommand: Command = {
  name: 'init',
  summary: 'create a project for your own handlers (package.json, handlers/, a test, Dockerfile)',
  help: `Usage: switchyard init [dir] [--force] [--from SPEC]

Creates a project for your own handlers in dir (default: the current
directory): package.json (scripts dev, test, start, typecheck), a strict
tsconfig.json, handlers/ with an example handler and its test, .gitignore, a
Dockerfile and docker-compose.yml for your project, and a README.

A directory that is not empty is refused unless --force (which overwrites the
files it creates and leaves the others alone).

Options:
  --force      write into a directory that is not empty
  --from SPEC  where the project's switchyard dependency comes from, as npm
               install takes it: a tarball made by npm pack, a git URL, or a
               version range (default: ^ this version)

Example:
  npx switchyard init my-handlers --from ../switchyard/switchyard-0.1.0.tgz
  cd my-handlers && npm install && npm test
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { force: { type: 'boolean' }, from: { type: 'string' } }, true);
    if (positionals.length > 1) throw new UsageError(`expected at most one directory, got ${positionals.length}: ${positionals.join(' ')}`);
    const target = resolve(io.cwd, positionals[0] ?? '.');
    const rel = relative(io.cwd, target);
    const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? target : rel;
    if (existsSync(target)) {
      const entries = readdirSync(target).filter((n) => n !== '.git');
      if (entries.length > 0 && !values.force) {
        throw new InitError(`${shown} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}); choose an empty or new directory, or pass --force to write the project's files into it`);
      }
    }
    const files = projectFiles(packageName(target), dependencySpec(str(values, 'from'), io.cwd));
    for (const [path, content] of Object.entries(files)) {
      const file = join(target, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    const cd = shown === '.' ? '' : `cd ${shown} && `;
    io.stdout.write(`created ${Object.keys(files).length} files in ${shown}:\n${Object.keys(files).map((f) => `  ${f}`).join('\n')}\n\nnext:\n  ${cd}npm install\n  npm test       # the example handler's test\n  npm run dev    # your handlers against a local sandbox, reloaded on save\n`);
    return EXIT.ok;
  },
};
