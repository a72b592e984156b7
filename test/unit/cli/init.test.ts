import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { InitError, initCommand, shellWord } from '../../../src/cli/init.js';
import { memoryIo } from '../../support/io.js';

// `switchyard init` run as a function in a temporary directory. The default source
// (this package packed by npm) spawns npm, so these tests give --from a version
// range or a tarball file; the packed default is covered by test/e2e/package.
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-init-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const init = async (...argv: string[]) => {
  const io = memoryIo({}, { cwd: dir });
  const code = await initCommand.run(argv, io);
  return { code, out: io.out() };
};
const manifest = (project: string) =>
  JSON.parse(readFileSync(join(dir, project, 'package.json'), 'utf8')) as {
    name: string;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
const own = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('switchyard init', () => {
  it('writes a project whose switchyard is the --from version range, and says what to run next', async () => {
    const { code, out } = await init('My Handlers', '--from', '^0.1.0');
    expect(code).toBe(0);
    const files = [
      'package.json',
      'tsconfig.json',
      '.gitignore',
      'handlers/order-question.ts',
      'handlers/order-question.test.ts',
      'fixtures/message.received.json',
      'Dockerfile',
      'docker-compose.yml',
      '.dockerignore',
      'README.md',
    ];
    for (const f of files) expect(readFileSync(join(dir, 'My Handlers', f), 'utf8').length).toBeGreaterThan(0);
    expect(out).toContain(`created ${files.length} files in My Handlers:`);
    expect(out).toContain("cd 'My Handlers' && npm install");
    const pkg = manifest('My Handlers');
    // The directory's name made into an npm package name.
    expect(pkg.name).toBe('my-handlers');
    expect(pkg.dependencies).toEqual({ switchyard: '^0.1.0', zod: own.dependencies['zod'] });
    expect(pkg.devDependencies).toEqual({
      '@types/node': own.devDependencies['@types/node'],
      typescript: own.devDependencies['typescript'],
      vitest: own.devDependencies['vitest'],
    });
    expect(pkg.scripts).toMatchObject({ dev: 'switchyard dev', test: 'vitest run', start: 'switchyard start' });
    // Nothing is vendored for a spec npm fetches itself, and the Dockerfile copies no vendor/.
    expect(readdirSync(join(dir, 'My Handlers'))).not.toContain('vendor');
    expect(readFileSync(join(dir, 'My Handlers', 'Dockerfile'), 'utf8')).not.toContain('COPY vendor');
    // The example fixture is the package's own.
    expect(readFileSync(join(dir, 'My Handlers', 'fixtures/message.received.json'), 'utf8')).toBe(
      readFileSync(new URL('../../../fixtures/message.received.json', import.meta.url), 'utf8'),
    );
  });

  it('a tarball given with --from is copied into vendor/ and the project depends on that copy', async () => {
    writeFileSync(join(dir, 'switchyard-9.9.9.tgz'), 'not really a tarball');
    const { code, out } = await init('proj', '--from', 'file:switchyard-9.9.9.tgz');
    expect(code).toBe(0);
    expect(readFileSync(join(dir, 'proj', 'vendor', 'switchyard-9.9.9.tgz'), 'utf8')).toBe('not really a tarball');
    expect(manifest('proj').dependencies['switchyard']).toBe('file:vendor/switchyard-9.9.9.tgz');
    expect(readFileSync(join(dir, 'proj', 'Dockerfile'), 'utf8')).toContain('COPY vendor ./vendor');
    expect(out).toContain('  vendor/switchyard-9.9.9.tgz');
  });

  it('a git URL is written as npm takes it', async () => {
    await init('proj', '--from', 'git+https://example.com/switchyard.git');
    expect(manifest('proj').dependencies['switchyard']).toBe('git+https://example.com/switchyard.git');
  });

  it('refuses a directory that is not empty, naming what is in it, unless --force; --force leaves other files alone', async () => {
    mkdirSync(join(dir, 'busy'));
    writeFileSync(join(dir, 'busy', 'notes.txt'), 'mine');
    writeFileSync(join(dir, 'busy', 'package.json'), '{}');
    await expect(init('busy', '--from', '1.0.0')).rejects.toThrow(InitError);
    await expect(init('busy', '--from', '1.0.0')).rejects.toThrow(
      "busy is not empty (notes.txt, package.json); choose an empty or new directory, or pass --force to write the project's files into it",
    );
    expect(await init('busy', '--from', '1.0.0', '--force')).toMatchObject({ code: 0 });
    expect(readFileSync(join(dir, 'busy', 'notes.txt'), 'utf8')).toBe('mine');
    expect(manifest('busy').dependencies['switchyard']).toBe('1.0.0');
  });

  it('a directory holding only .git counts as empty', async () => {
    mkdirSync(join(dir, 'repo', '.git'), { recursive: true });
    expect(await init('repo', '--from', '1.0.0')).toMatchObject({ code: 0 });
  });

  it('init in the current directory says "created … in ." and no cd', async () => {
    const { out } = await init('--from', '1.0.0');
    expect(out).toMatch(/^created 10 files in \.:/);
    expect(out).toContain('next:\n  npm install\n');
  });

  it('bad input says what was wrong and what was expected', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    await expect(init('a-file', '--from', '1.0.0')).rejects.toThrow(
      'a-file is a file; expected a directory to create the project in (new or empty)',
    );
    await expect(init('one', 'two')).rejects.toThrow(new UsageError('expected at most one directory, got 2: one two'));
    await expect(init('proj', '--from', ' ')).rejects.toThrow(
      '--from: expected a tarball made by npm pack, a git URL or a version range, got an empty value',
    );
    await expect(init('proj', '--from', './nowhere.tgz')).rejects.toThrow(
      /--from \.\/nowhere\.tgz: .*nowhere\.tgz does not exist; expected a tarball made by npm pack, a package directory, a git URL or a version range/,
    );
    await expect(init('proj', '--frm', 'x')).rejects.toThrow(UsageError);
    await expect(init('proj', '--frm', 'x')).rejects.toThrow(/Unknown option '--frm'/);
  });
});

describe('shellWord', () => {
  it.each(['My Handlers', "Zoe's bots", 'a$b`c\\d"e', 'plain-dir/sub_1.x', '../ünïcode dir'])(
    'is read back by sh as one word: %s',
    (path) => {
      expect(execFileSync('sh', ['-c', `printf %s ${shellWord(path)}`], { encoding: 'utf8' })).toBe(path);
    },
  );

  it('leaves a path with nothing to quote as it is', () => {
    expect(shellWord('my-handlers/sub.dir')).toBe('my-handlers/sub.dir');
  });
});
