import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { projectFiles, type SwitchyardSource } from './init/project-files.js';

/** A directory init will not write into (not empty, without --force). */
export class InitError extends Error {
  readonly code = 'init_refused';
  constructor(message: string) {
    super(message);
    this.name = 'InitError';
  }
}

/** This package's root (package.json beside bin/ and dist/), from dist/cli/ or src/cli/. */
const OWN_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A spec npm fetches itself: a URL other than `file:`, `git+…`, `github:…`, a version range. */
const remote = (from: string) => /^[a-z][a-z0-9+.-]*:/i.test(from) && !from.startsWith('file:');

/**
 * Where the new project's `switchyard` comes from. A tarball (`--from`, or this
 * package packed as it is installed) is copied into `vendor/` so the project,
 * its lock file and its Docker build hold it; `--from` a git URL or a version
 * range is written as npm takes it.
 */
function switchyardSource(from: string | undefined, cwd: string, vendor: string): SwitchyardSource {
  if (from !== undefined && from.trim() === '')
    throw new UsageError('--from: expected a tarball made by npm pack, a git URL or a version range, got an empty value');
  if (from !== undefined && (remote(from) || /^[\^~<>=]|^\d/.test(from))) return { spec: from };
  const path = from === undefined ? OWN_ROOT : resolve(cwd, from.startsWith('file:') ? from.slice(5) : from);
  if (!existsSync(path)) {
    const expected = 'a tarball made by npm pack, a package directory, a git URL or a version range';
    throw new InitError(`--from ${from ?? ''}: ${path} does not exist; expected ${expected}`);
  }
  mkdirSync(vendor, { recursive: true });
  if (statSync(path).isFile()) {
    copyFileSync(path, join(vendor, basename(path)));
    return { vendored: basename(path) };
  }
  // A package directory (this installed package by default) is packed as it is: its files, built, without running its scripts.
  const out = execFileSync('npm', ['pack', path, '--ignore-scripts', '--pack-destination', vendor, '--json', '--loglevel=error'], {
    encoding: 'utf8',
  });
  const packed = (JSON.parse(out) as { filename: string }[])[0];
  if (!packed) throw new InitError(`npm pack ${path} wrote no tarball`);
  return { vendored: packed.filename };
}

/** npm's package-name rule, loosely: lower case, no spaces; the directory name made to fit. */
const packageName = (dir: string) =>
  basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '') || 'switchyard-handlers';

export const initCommand: Command = {
  name: 'init',
  help: `Usage: switchyard init [dir] [--force] [--from SPEC]

Creates a project for your own handlers in dir (default: the current
directory): package.json (scripts dev, test, start, typecheck), a strict
tsconfig.json, handlers/ with an example handler and its test, .gitignore, a
Dockerfile and docker-compose.yml for your project, and a README.

A directory that is not empty is refused unless --force (which overwrites the
files it creates and leaves the others alone).

The project's switchyard is this one: packed into vendor/ (so npm ci and
the project's Docker build find it), unless --from says otherwise.

Options:
  --force      write into a directory that is not empty
  --from SPEC  where the project's switchyard comes from: a tarball made by
               npm pack (copied into vendor/), a git URL or a version range

Examples:
  npx --package ./switchyard-0.1.0.tgz switchyard init my-handlers
  node switchyard/bin/switchyard.js init my-handlers     (from a clone, after npm ci)
  cd my-handlers && npm install && npm test
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { force: { type: 'boolean' }, from: { type: 'string' } }, true);
    if (positionals.length > 1) throw new UsageError(`expected at most one directory, got ${positionals.length}: ${positionals.join(' ')}`);
    const target = resolve(io.cwd, positionals[0] ?? '.');
    const rel = relative(io.cwd, target);
    const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? target : rel;
    if (existsSync(target)) {
      if (!statSync(target).isDirectory())
        throw new InitError(`${shown} is a file; expected a directory to create the project in (new or empty)`);
      const entries = readdirSync(target).filter((n) => n !== '.git');
      if (entries.length > 0 && !values.force) {
        const some = `${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}`;
        throw new InitError(
          `${shown} is not empty (${some}); choose an empty or new directory, or pass --force to write the project's files into it`,
        );
      }
    }
    const source = switchyardSource(str(values, 'from'), io.cwd, join(target, 'vendor'));
    const files = projectFiles(packageName(target), source);
    for (const [path, content] of Object.entries(files)) {
      const file = join(target, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    const cd = shown === '.' ? '' : `cd ${shellWord(shown)} && `;
    const listed = [...Object.keys(files), ...('vendored' in source ? [`vendor/${source.vendored}`] : [])];
    const next =
      `next:\n  ${cd}npm install\n  npm test       # the example handler's test\n` +
      '  npm run dev    # your handlers against a local sandbox, reloaded on save\n';
    io.stdout.write(`created ${listed.length} files in ${shown}:\n${listed.map((f) => `  ${f}`).join('\n')}\n\n${next}`);
    return EXIT.ok;
  },
};

/** A path as one word a POSIX shell reads back unchanged: as is when it is safe, else in single quotes. */
export function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
