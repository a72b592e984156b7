import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a user gets it: `npm pack` of a copy of this source tree that
 * has no dist/ (the tarball must build it), installed with `npm install <tgz>`
 * into fresh projects of each module type, then used through npx and import().
 * Slow (a TypeScript build and two installs), so it has its own timeouts.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TYPES = ['commonjs', 'module'] as const;
type ProjectType = (typeof TYPES)[number];
const EXTENSIONS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'] as const;

interface Run { code: number; out: string; stdout: string }

/** Runs a command with a user's plain environment (no npm_* variables of a surrounding `npm test`). */
function sh(cmd: string, args: string[], cwd: string, timeout = 120_000): Promise<Run> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LANG: 'C.UTF-8' };
  return new Promise((res) => {
    execFile(cmd, args, { cwd, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      res({ code, out: `${stdout}${stderr}`, stdout });
    });
  });
}

async function ok(cmd: string, args: string[], cwd: string): Promise<string> {
  const r = await sh(cmd, args, cwd);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}:\n${r.out}`);
  return r.stdout;
}

/** A handler module of each extension; `.js` follows the project's type. */
function handlerSource(ext: (typeof EXTENSIONS)[number], type: ProjectType): string {
  const id = `h-${ext}`;
  const ts = ext.endsWith('ts');
  const commonjs = ext === 'cjs' || (ext === 'js' && type === 'commonjs');
  // Each records the HandlerConfigError class it sees: one class means one copy of the package.
  const record = `(${ts ? '(globalThis as any)' : 'globalThis'}.switchyardClasses ??= new Set()).add(HandlerConfigError);`;
  const handle = `async handle() {\n    const reason${ts ? ': string' : ''} = 'stop';\n    throw new HandlerConfigError(reason);\n  }`;
  const def = `defineHandler({\n  id: '${id}',\n  on: ['message.received'],\n  ${handle},\n})`;
  return commonjs
    ? `const { defineHandler, HandlerConfigError } = require('switchyard');\n${record}\nmodule.exports = ${def};\n`
    : `import { defineHandler, HandlerConfigError } from 'switchyard';\n${record}\nexport default ${def};\n`;
}

/** Loaded last: its id says whether every module above saw the package this process runs. */
const SAME_PACKAGE = `import { defineHandler, HandlerConfigError } from 'switchyard';
const copies = [...(globalThis.switchyardClasses ?? [])].filter((c) => c !== HandlerConfigError).length;
export default defineHandler({ id: copies === 0 ? 'one-switchyard' : 'copies-of-switchyard-' + copies, on: ['lead.won'], async handle() {} });
`;

let work: string;
let tarball: string;
let tarballFiles: string[];
const projects = {} as Record<ProjectType, string>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'sy-package-'));
  // The source tree as git sees it (tracked and new files, not ignored ones such as dist/ and node_modules/).
  const source = join(work, 'source');
  const files = (await ok('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT)).split('\0').filter(Boolean);
  for (const f of files) {
    if (!lstatSync(join(ROOT, f), { throwIfNoEntry: false })?.isFile()) continue; // deleted in the working tree, or a link
    mkdirSync(dirname(join(source, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(source, f));
  }
  if (existsSync(join(source, 'dist'))) throw new Error('the copied source tree must not contain dist/');
  // The build needs the devDependencies (TypeScript): this checkout's, rather than a second install.
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  const packed = JSON.parse(await ok('npm', ['pack', '--pack-destination', work, '--json', '--loglevel=error'], source)) as { filename: string }[];
  tarball = join(work, packed[0]!.filename);
  tarballFiles = (await ok('tar', ['tzf', tarball], work)).split('\n').filter(Boolean);

  for (const type of TYPES) {
    const dir = join(work, type);
    mkdirSync(join(dir, 'handlers'), { recursive: true });
    await ok('npm', ['init', '-y', '--loglevel=error'], dir);
    if (type === 'module') await ok('npm', ['pkg', 'set', 'type=module'], dir);
    await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], dir);
    for (const ext of EXTENSIONS) writeFileSync(join(dir, 'handlers', `h-${ext}.${ext}`), handlerSource(ext, type));
    writeFileSync(join(dir, 'handlers', 'zz-same-package.mjs'), SAME_PACKAGE);
    projects[type] = dir;
  }
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed tarball', { timeout: 60_000 }, () => {
  it('carries the compiled CLI and library although the packed tree had no dist/', () => {
    for (const f of ['package/dist/cli/main.js', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/bin/switchyard.js', 'package/package.json']) {
      expect(tarballFiles).toContain(f);
    }
    expect(tarballFiles.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);
    // The Lua scripts are read at run time from beside their modules; tsc does not emit them, the build copies them.
    const lua = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.lua'));
    expect(lua.length).toBeGreaterThan(0);
    for (const f of lua) expect(tarballFiles).toContain(`package/dist/${f}`);
  });

  it('a fresh `npm init -y` project is CommonJS (the case that used to fail)', () => {
    expect((JSON.parse(readFileSync(join(projects.commonjs, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs').toBe('commonjs');
  });

  describe.each(TYPES)('installed into a "%s" project', (type) => {
    it('runs `npx switchyard --help` and `--version` without any devDependency installed', async () => {
      const dir = projects[type];
      for (const dev of ['typescript', 'vitest']) expect(existsSync(join(dir, 'node_modules', dev))).toBe(false);
      const help = await sh('npx', ['switchyard', '--help'], dir);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(/^Usage: switchyard <command>/m);
      const version = await sh('npx', ['switchyard', '--version'], dir);
      expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    });

    it("import('switchyard/sandbox') gives the sandbox, as docs/sandbox.md shows", async () => {
      const script = "import('switchyard/sandbox').then(async (m) => { const s = m.createSandbox({ token: 'tok' }); const r = await s.listen(0); " +
        "const me = await fetch(r.baseUrl + '/me', { headers: { authorization: 'Bearer tok' } }); console.log(me.status); await r.close(); })";
      const r = await sh('node', ['-e', script], projects[type]);
      expect(r.stdout.trim()).toBe('200');
    });

    it("import('switchyard') gives the library", async () => {
      const r = await sh('node', ['-e', "import('switchyard').then((m) => console.log(typeof m.defineHandler, typeof m.createApiClient, typeof m.verify))"], projects[type]);
      expect(r).toMatchObject({ code: 0, stdout: 'function function function\n' });
    });

    it('loads handlers of every extension, sharing the one package instance', async () => {
      const r = await sh('npx', ['switchyard', 'handlers', '--json'], projects[type]);
      expect(r.code, r.out).toBe(0);
      const ids = (JSON.parse(r.stdout) as { id: string }[]).map((h) => h.id);
      expect(ids).toEqual([...EXTENSIONS.map((e) => `h-${e}`).sort(), 'one-switchyard']);
    });

    it("runs each handler as the worker does: its HandlerConfigError is dead-lettered at once, not retried", async () => {
      const r = await sh('npx', ['switchyard', 'replay', 'node_modules/switchyard/fixtures/message.received.json', '--inline'], projects[type]);
      expect(r.code, r.out).toBe(1);
      for (const ext of EXTENSIONS) expect(r.out).toMatch(new RegExp(`✗ h-${ext} dead after \\d+ ms: HandlerConfigError: stop`));
    });

    it('doctor reports the handlers as loaded', async () => {
      const r = await sh('npx', ['switchyard', 'doctor', '--json'], projects[type]);
      const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
      expect(checks.find((c) => c.name === 'handlers')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^7 loaded from \.\/handlers: h-cjs, h-cts/) });
    });
  });

  it('an installed copy without its build says so in terms of the install, not of a build step', async () => {
    const dist = join(projects.module, 'node_modules', 'switchyard', 'dist');
    renameSync(dist, `${dist}.off`);
    try {
      const r = await sh('npx', ['switchyard', '--help'], projects.module);
      expect(r.code).toBe(2);
      expect(r.out).toMatch(/installed without its compiled code \(dist\/ is missing\)/);
      expect(r.out).toMatch(/Reinstall switchyard from a published release or a tarball made by `npm pack`/);
      expect(r.out).not.toMatch(/npm run build/);
    } finally {
      renameSync(`${dist}.off`, dist);
    }
  });
});
