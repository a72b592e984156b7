import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../../src/sandbox/index.js';
import { match } from '../../support/match.js';
import { waitFor } from '../../support/wait.js';
import { docsBlock, NUDGE_HANDLER, NUDGE_TEST, NUDGE_TYPE_ERRORS, sandboxNotes, withDev } from '../../support/package-project.js';
import { requireTool, skipTool } from '../../support/tools.js';

/**
 * The package as a user gets it: `npm pack` of a copy of this source tree that
 * has no dist/ (the tarball must build it), installed with `npm install <tgz>`
 * into fresh projects of each module type, then used through npx and import().
 * Slow (a TypeScript build and two installs), so it has its own timeouts.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TYPES = ['commonjs', 'module'] as const;
type ProjectType = (typeof TYPES)[number];
const EXTENSIONS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'] as const;

interface Run {
  code: number;
  out: string;
  stdout: string;
}

/** Runs a command with a user's plain environment (no npm_* variables of a surrounding `npm test`), plus `extra`. */
function sh(cmd: string, args: string[], cwd: string, timeout = 120_000, extra: Record<string, string> = {}): Promise<Run> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LANG: 'C.UTF-8', ...extra };
  return new Promise((res) => {
    execFile(cmd, args, { cwd, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      res({ code, out: `${stdout}${stderr}`, stdout });
    });
  });
}

/** Runs a command that must succeed. `timeout`: a build or an install on a busy machine (files run side by side) takes minutes. */
async function ok(cmd: string, args: string[], cwd: string, timeout = 120_000): Promise<string> {
  const r = await sh(cmd, args, cwd, timeout);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}:\n${r.out}`);
  return r.stdout;
}

/** A handler module of each extension; `.js` follows the project's type. */
function handlerSource(ext: (typeof EXTENSIONS)[number], type: ProjectType): string {
  const id = `h-${ext}`;
  const ts = ext.endsWith('ts');
  const commonjs = ext === 'cjs' || (ext === 'js' && type === 'commonjs');
  // Each records the HandlerConfigError class it sees, and the ValidationError of `switchyard/api`:
  // one class each means one copy of the package, whichever entry point a module imports.
  const g = ts ? '(globalThis as any)' : 'globalThis';
  const record = `(${g}.switchyardClasses ??= new Set()).add(HandlerConfigError);\n(${g}.switchyardApiClasses ??= new Set()).add(ValidationError);`;
  const handle = `async handle() {\n    const reason${ts ? ': string' : ''} = 'stop';\n    throw new HandlerConfigError(reason);\n  }`;
  const def = `defineHandler({\n  id: '${id}',\n  on: ['message.received'],\n  ${handle},\n})`;
  return commonjs
    ? `const { defineHandler, HandlerConfigError } = require('switchyard');\nconst { ValidationError } = require('switchyard/api');\n${record}\nmodule.exports = ${def};\n`
    : `import { defineHandler, HandlerConfigError } from 'switchyard';\nimport { ValidationError } from 'switchyard/api';\n${record}\nexport default ${def};\n`;
}

/** Loaded last: its id says whether every module above saw the package this process runs. */
const SAME_PACKAGE = `import { defineHandler, HandlerConfigError, ValidationError } from 'switchyard';
const copies = [...(globalThis.switchyardClasses ?? [])].filter((c) => c !== HandlerConfigError).length +
  [...(globalThis.switchyardApiClasses ?? [])].filter((c) => c !== ValidationError).length;
export default defineHandler({ id: copies === 0 ? 'one-switchyard' : 'copies-of-switchyard-' + copies, on: ['lead.won'], async handle() {} });
`;

/** A user's TypeScript module: every entry point, through a few of its named exports. */
const CONSUMER_TS = `import { defineHandler, HandlerConfigError, NonRetriableError, UnrecoverableError, ValidationError, EVENT_NAMES, parseBusinessHours, type Contact, type RetryOptions, type WorkspaceEvent } from 'switchyard';
import { createApiClient, NotFoundError, type ApiClient, type ApiClientOptions, type ApiRetryOptions, type Order } from 'switchyard/api';
import { createSandbox, type RunningSandbox, type SandboxOptions } from 'switchyard/sandbox';
import { createEvent, loadFixture, sign, signBody, signDelivery, testHandler, toEvent, type Delivery, type TestHandlerResult } from 'switchyard/testing';

const tagVip = defineHandler({
  id: 'tag-vip',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    const contact: Contact = await ctx.api.contacts.get(event.data.contact_id);
    if (contact.blocked) throw new HandlerConfigError('blocked');
  },
});
export default tagVip;
const options: ApiClientOptions = { baseUrl: 'https://example.test/api/v1', token: 't' };
export const api: ApiClient = createApiClient(options);
export const orders = (): Promise<Order> => api.orders.get(1);
export const missing = (e: unknown): boolean => e instanceof NotFoundError || e instanceof ValidationError;
const sandboxOptions: SandboxOptions = { token: 'tok', burst: 1000 };
export const listen = (): Promise<RunningSandbox> => createSandbox(sandboxOptions).listen(0);
export async function won(): Promise<WorkspaceEvent<'lead.won'>> {
  const delivery: Delivery = await loadFixture('lead.won');
  const { body, headers } = signDelivery(delivery, 'whsec');
  if (body.length === 0 || !headers['content-type']) throw new Error('not signed');
  return toEvent(delivery, 'lead.won');
}
export const names: readonly string[] = EVENT_NAMES;
export const tested = (): Promise<TestHandlerResult<'conversation.closed'>> => testHandler(tagVip, createEvent('conversation.closed', { data: { contact_id: 36 } }));
export const open = parseBusinessHours('Mon-Fri 09:00-17:00 Europe/Berlin');
const retry: RetryOptions = { attempts: 3, backoff: { type: 'fixed', delay: '5s' } };
const apiRetry: Partial<ApiRetryOptions> = { maxAttempts: 1 };
export const strict = defineHandler({ id: 'strict', on: ['lead.won'], retry, async handle() { throw new NonRetriableError('stop'); } });
// Deprecated for one release, still compiling: UnrecoverableError, sign(secret, body).
export const old = (): Error => new UnrecoverableError('stop');
export const sameSignature = (): boolean => sign('s', '{}') === signBody('{}', 's');
export const once: ApiClient = createApiClient({ ...options, retry: apiRetry });
`;

/** What must not compile in a user's module: a deep import into dist/ and names each entry point keeps internal. */
const LEAKS_TS = `import { createTransport } from 'switchyard/dist/api/transport.js';
import { tokenKey, createApiClient } from 'switchyard';
import { errorFromResponse } from 'switchyard/api';
import { SandboxState } from 'switchyard/sandbox';
export const leaked = [createTransport, tokenKey, createApiClient, errorFromResponse, new SandboxState({} as never)];
import type { RetryOptions } from 'switchyard/api';
export type Old = RetryOptions;
`;

/** Exactly these errors (file:line code), in the leaks file only. */
const LEAK_ERRORS = [
  'leaks.ts:1 TS2307', // Cannot find module 'switchyard/dist/api/transport.js'
  'leaks.ts:2 TS2305', // 'switchyard' has no exported member 'tokenKey'
  'leaks.ts:2 TS2305', // ... nor 'createApiClient' (it is in switchyard/api)
  'leaks.ts:3 TS2305', // 'switchyard/api' has no exported member 'errorFromResponse'
  'leaks.ts:5 TS1362', // SandboxState is a type of switchyard/sandbox, not a value
  'leaks.ts:6 TS2724', // switchyard/api has no RetryOptions (a handler's is switchyard's; the client's is ApiRetryOptions)
];

const RESOLUTIONS = [
  ['node16', 'node16'],
  ['nodenext', 'nodenext'],
  ['esnext', 'bundler'],
] as const;

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
  const packed = JSON.parse(await ok('npm', ['pack', '--pack-destination', work, '--json', '--loglevel=error'], source, 300_000)) as {
    filename: string;
  }[];
  tarball = join(work, packed[0]!.filename);
  tarballFiles = (await ok('tar', ['tzf', tarball], work)).split('\n').filter(Boolean);

  for (const type of TYPES) {
    const dir = join(work, type);
    mkdirSync(join(dir, 'handlers'), { recursive: true });
    await ok('npm', ['init', '-y', '--loglevel=error'], dir);
    if (type === 'module') await ok('npm', ['pkg', 'set', 'type=module'], dir);
    await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], dir, 300_000);
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
    const entries = ['index', 'api/public', 'sandbox/index', 'testing/index'].flatMap((e) => [
      `package/dist/${e}.js`,
      `package/dist/${e}.d.ts`,
    ]);
    for (const f of ['package/dist/cli/main.js', ...entries, 'package/bin/switchyard.js', 'package/package.json']) {
      expect(tarballFiles).toContain(f);
    }
    expect(tarballFiles.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);
    // The Lua scripts are read at run time from beside their modules; tsc does not emit them, the build copies them.
    const lua = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.lua'));
    expect(lua.length).toBeGreaterThan(0);
    for (const f of lua) expect(tarballFiles).toContain(`package/dist/${f}`);
  });

  it('a fresh `npm init -y` project is CommonJS (the case that used to fail)', () => {
    expect((JSON.parse(readFileSync(join(projects.commonjs, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs').toBe(
      'commonjs',
    );
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
      const script =
        "import('switchyard/sandbox').then(async (m) => { const s = m.createSandbox({ token: 'tok' }); const r = await s.listen(0); " +
        "const me = await fetch(r.baseUrl + '/me', { headers: { authorization: 'Bearer tok' } }); console.log(me.status); await r.close(); })";
      const r = await sh('node', ['-e', script], projects[type]);
      expect(r.stdout.trim()).toBe('200');
    });

    it("import('switchyard') gives the handler kit, and each subpath its part; nothing else is reachable", async () => {
      const script = `Promise.all(['switchyard', 'switchyard/api', 'switchyard/testing'].map((s) => import(s))).then(async ([root, api, testing]) => {
        console.log(typeof root.defineHandler, typeof root.ValidationError, typeof root.createApiClient, typeof root.tokenKey, typeof root.verify);
        console.log(typeof api.createApiClient, api.ValidationError === root.ValidationError, typeof api.tokenKey);
        const event = testing.toEvent(await testing.loadFixture('lead.won'), 'lead.won');
        console.log(event.name, testing.signDelivery('{}', 's').headers[testing.SIGNATURE_HEADER.toLowerCase()] === testing.signBody('{}', 's'), testing.sign('s', '{}') === testing.signBody('{}', 's'));
        console.log(new root.UnrecoverableError('x') instanceof root.NonRetriableError, new root.NonRetriableError('x').name);
        console.log(require('switchyard/package.json').version);
        await import('switchyard/dist/api/transport.js').catch((e) => console.log(e.code));
      })`;
      const r = await sh('node', ['-e', script], projects[type]);
      expect(r.code, r.out).toBe(0);
      expect(r.stdout.split('\n')).toEqual([
        'function function undefined undefined undefined',
        'function true undefined',
        'lead.won true true',
        'true NonRetriableError',
        VERSION,
        'ERR_PACKAGE_PATH_NOT_EXPORTED',
        '',
      ]);
    });

    it('loads handlers of every extension, sharing the one package instance', async () => {
      const r = await sh('npx', ['switchyard', 'handlers', '--json'], projects[type]);
      expect(r.code, r.out).toBe(0);
      const ids = (JSON.parse(r.stdout) as { id: string }[]).map((h) => h.id);
      expect(ids).toEqual([...EXTENSIONS.map((e) => `h-${e}`).sort(), 'one-switchyard']);
    });

    it('runs each handler as the worker does: its HandlerConfigError is dead-lettered at once, not retried', async () => {
      const r = await sh(
        'npx',
        ['switchyard', 'replay', 'node_modules/switchyard/fixtures/message.received.json', '--inline'],
        projects[type],
      );
      expect(r.code, r.out).toBe(1);
      for (const ext of EXTENSIONS) expect(r.out).toMatch(new RegExp(`✗ h-${ext} dead after \\d+ ms: HandlerConfigError: stop`));
    });

    it('doctor reports the handlers as loaded', async () => {
      const r = await sh('npx', ['switchyard', 'doctor', '--json'], projects[type]);
      const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
      expect(checks.find((c) => c.name === 'handlers')).toMatchObject({
        status: 'ok',
        detail: match.stringMatching(/^7 loaded from \.\/handlers: h-cjs, h-cts/),
      });
    });
  });

  describe("a TypeScript consumer (the repository's TypeScript, no install of its own)", () => {
    it.each(RESOLUTIONS)(
      'module %s, moduleResolution %s: every entry point type-checks; a deep import and internal names do not',
      async (module, moduleResolution) => {
        const dir = projects.module;
        writeFileSync(join(dir, 'consumer.ts'), CONSUMER_TS);
        writeFileSync(join(dir, 'leaks.ts'), LEAKS_TS);
        const tsconfig = `tsconfig.${moduleResolution}.json`;
        writeFileSync(
          join(dir, tsconfig),
          JSON.stringify({
            compilerOptions: {
              module,
              moduleResolution,
              target: 'es2022',
              strict: true,
              noEmit: true,
              // The package's own .d.ts files are checked too, not skipped.
              skipLibCheck: false,
              types: ['node'],
              typeRoots: [join(ROOT, 'node_modules', '@types')],
            },
            files: ['consumer.ts', 'leaks.ts'],
          }),
        );
        const r = await sh('node', [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], dir);
        const errors = r.stdout
          .split('\n')
          .filter((l) => l.includes(': error TS'))
          .map((l) => l.replace(/^(\S+?)\((\d+),\d+\): error (TS\d+):.*$/, '$1:$2 $3'));
        expect(errors, r.out).toEqual(LEAK_ERRORS);
      },
    );
  });

  it('a vitest test of a handler written in the project passes through switchyard/testing: README "Testing your handlers" as written', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const firstTsBlock = (heading: string): string => {
      const start = readme.indexOf('```ts\n', readme.indexOf(`\n${heading}\n`)) + 6;
      return readme.slice(start, readme.indexOf('```\n', start));
    };
    const dir = join(projects.module, 'kit');
    for (const d of ['handlers', 'test', 'node_modules']) mkdirSync(join(dir, d), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'kit', private: true, type: 'module' }));
    writeFileSync(join(dir, 'handlers', 'tag-vip-closers.ts'), firstTsBlock('## Writing handlers'));
    writeFileSync(join(dir, 'test', 'tag-vip-closers.test.ts'), firstTsBlock('## Testing your handlers'));
    // vitest is the repository's (as tsc is above); switchyard and zod resolve to the project's install of the tarball.
    symlinkSync(join(ROOT, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'), 'dir');
    const r = await sh('node', [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=verbose'], dir);
    expect(r.code, r.out).toBe(0);
    expect(stripVTControlCharacters(r.out)).toMatch(/Tests\s+3 passed \(3\)/);
  });

  describe('`switchyard init` in a directory of its own, installed from the tarball', () => {
    let app: string;
    beforeAll(async () => {
      app = join(work, 'my-handlers');
      // No --from: the installed package packs itself into the project's vendor/.
      const r = await sh('npx', ['switchyard', 'init', app], projects.module);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain('npm install');
      await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], app, 300_000);
    }, 600_000);

    it('writes a project with the scripts, a strict tsconfig, an example handler and its test, a fixture, this switchyard vendored, and its own container files', async () => {
      const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
        type: string;
        scripts: Record<string, string>;
        dependencies: Record<string, string>;
      };
      expect(pkg.type).toBe('module');
      expect(pkg.scripts).toEqual({ dev: 'switchyard dev', test: 'vitest run', start: 'switchyard start', typecheck: 'tsc --noEmit' });
      expect(pkg.dependencies['switchyard']).toBe(`file:vendor/switchyard-${VERSION}.tgz`);
      const vendored = (await ok('tar', ['tzf', join(app, 'vendor', `switchyard-${VERSION}.tgz`)], app)).split('\n').filter(Boolean).sort();
      expect(vendored).toEqual([...tarballFiles].sort());
      expect(readFileSync(join(app, 'Dockerfile'), 'utf8')).toMatch(/COPY vendor \.\/vendor\nRUN npm ci --omit=dev/);
      for (const f of [
        'tsconfig.json',
        '.gitignore',
        'handlers/order-question.ts',
        'handlers/order-question.test.ts',
        'fixtures/message.received.json',
        'Dockerfile',
        'docker-compose.yml',
        'README.md',
      ]) {
        expect(existsSync(join(app, f)), f).toBe(true);
      }
      expect(readFileSync(join(app, '.gitignore'), 'utf8')).toMatch(/^\.switchyard\/$/m);
      expect(readFileSync(join(app, '.gitignore'), 'utf8')).toMatch(/^\.env$/m);
      expect(readFileSync(join(app, '.dockerignore'), 'utf8')).toMatch(/^\.env$/m);
      expect(readFileSync(join(app, 'README.md'), 'utf8')).toMatch(/```sh\nnpm run dev .*\nnpm test .*\n```/);
    });

    it('refuses a directory that is not empty unless --force, saying why', async () => {
      const r = await sh('npx', ['switchyard', 'init', app], projects.module);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/is not empty .*pass --force/);
      expect(r.out).not.toMatch(/\n\s+at /);
    });

    it('npm test passes: the example handler tested through switchyard/testing against the in-process sandbox', async () => {
      const r = await sh('npm', ['test'], app, 180_000);
      expect(r.code, r.out).toBe(0);
      expect(stripVTControlCharacters(r.out)).toMatch(/Tests\s+2 passed \(2\)/);
    });

    it('npm run typecheck passes (strict), and `switchyard handlers` loads the example', async () => {
      const tc = await sh('npm', ['run', 'typecheck'], app, 180_000);
      expect(tc.code, tc.out).toBe(0);
      const h = await sh('npx', ['switchyard', 'handlers', '--json'], app);
      expect(h.code, h.out).toBe(0);
      expect((JSON.parse(h.stdout) as { id: string }[]).map((x) => x.id)).toEqual(['order-question']);
    });

    it('replays its fixture through the example handler against a sandbox: the dry run prints the note, sends no write', async () => {
      const sandbox = createSandbox({ token: 'tok' });
      const running = await sandbox.listen(0);
      try {
        const r = await sh('npx', ['switchyard', 'replay', 'fixtures/', '--inline', '--dry-run'], app, 120_000, {
          WORKSPACE_API_URL: running.baseUrl,
          WORKSPACE_API_TOKEN: 'tok',
        });
        expect(r.code, r.out).toBe(0);
        expect(r.out).toMatch(/✓ order-question completed/);
        expect(r.out).toMatch(/dry POST \/conversations\/38\/notes .*"body":"Customer is asking about an order\."/);
        expect(
          sandbox.state.log
            .list()
            .filter((q) => q.method !== 'GET' && !q.path.endsWith('/contacts/search'))
            .map((q) => `${q.method} ${q.path}`),
        ).toEqual([]);
        expect(sandbox.state.log.list().length).toBeGreaterThan(0);
      } finally {
        await running.close();
      }
    });

    it('npm run dev serves its handlers against the sandbox: a customer asks about an order, the note is written', async () => {
      await withDev(app, {}, async (dev) => {
        const inbound = await fetch(`${dev.sandbox}/_sandbox/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ contact: { name: 'Zoe Night', email: 'zoe@example.com' }, channel_id: 23, body: 'Where is my order?' }),
        });
        expect(inbound.status, await inbound.clone().text()).toBeLessThan(300);
        await waitFor(async () => (await sandboxNotes(dev)).length > 0, 30_000).catch(() => {
          throw new Error(`no note was written:\n${dev.output()}`);
        });
        expect(await sandboxNotes(dev)).toEqual([[201, 'Customer is asking about an order.']]);
        // The handler logs after its write: wait for the line rather than race it.
        await dev.waitFor(/order question noted/, 10_000);
      });
    }, 120_000);

    it.skipIf(skipTool('docker-compose'))('its docker-compose.yml is valid (docker-compose config)', async () => {
      requireTool('docker-compose');
      const r = await sh('docker-compose', ['config', '-q'], app);
      expect(r.code, r.out).not.toBe(0);
      expect(r.out).toMatch(/\.env/);
      writeFileSync(join(app, '.env'), 'WEBHOOK_SECRETS=whsec_x\nWORKSPACE_API_URL=https://example.test/api/v1\nWORKSPACE_API_TOKEN=tok\n');
      const ok2 = await sh('docker-compose', ['config', '-q'], app);
      expect(ok2.code, ok2.out).toBe(0);
      rmSync(join(app, '.env'));
    });

    describe("a workflow in the project (sleep, waitForEvent, cancelOn, ctx.state): docs/handlers.md's SLA example as written, and a handler using each", () => {
      beforeAll(() => {
        mkdirSync(join(app, 'test'), { recursive: true });
        writeFileSync(join(app, 'handlers', 'first-reply-sla.ts'), docsBlock('// handlers/first-reply-sla.ts'));
        writeFileSync(join(app, 'test', 'first-reply-sla.test.ts'), docsBlock('// test/first-reply-sla.test.ts'));
        writeFileSync(join(app, 'handlers', 'follow-up-nudge.ts'), NUDGE_HANDLER);
        writeFileSync(join(app, 'test', 'follow-up-nudge.test.ts'), NUDGE_TEST);
        // The project's tsconfig checks handlers/; its tests in test/ too.
        const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')) as { include: string[] };
        writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ ...tsconfig, include: [...tsconfig.include, 'test'] }, null, 2));
      });

      it("type-checks with the project's tsc: ctx.waitForEvent gives the event waited for (a field it lacks is an error)", async () => {
        const tc = await sh('npm', ['run', 'typecheck'], app, 180_000);
        expect(tc.code, tc.out).toBe(0);
        writeFileSync(join(app, 'handlers', 'zz-wrong-field.ts'), NUDGE_TYPE_ERRORS);
        try {
          const bad = await sh('npm', ['run', 'typecheck'], app, 180_000);
          expect(
            bad.out
              .split('\n')
              .filter((l) => l.includes('error TS'))
              .map((l) => l.replace(/^(\S+?)\((\d+),\d+\): error (TS\d+):.*$/, '$1:$2 $3')),
          ).toEqual(['handlers/zz-wrong-field.ts:7 TS2339']); // Property 'direction' does not exist on a conversation.closed's data
        } finally {
          rmSync(join(app, 'handlers', 'zz-wrong-field.ts'));
        }
      });

      it('npm test passes: both tested with testHandler on the virtual clock (no real waiting)', async () => {
        const r = await sh('npm', ['test'], app, 180_000);
        expect(r.code, r.out).toBe(0);
        expect(stripVTControlCharacters(r.out)).toMatch(/Tests\s+8 passed \(8\)/);
      });

      it('replay --inline runs the SLA to its end: its wait answered by the reply among the fixtures', async () => {
        const f = (n: string) => `node_modules/switchyard/fixtures/${n}.json`;
        const r = await sh(
          'npx',
          ['switchyard', 'replay', f('message.received'), f('message.sent'), '--inline', '--handler', 'first-reply-sla'],
          app,
          120_000,
          { SLA_ASSIGNEE: '21' },
        );
        expect(r.code, r.out).toBe(0);
        expect(r.out).toMatch(
          /✓ first-reply-sla completed in \d+ ms\n {6}wait "reply" for message\.sent \(timeout 1h\) — answered by message\.sent evt_01JNK7YB3F0QW8C2ZK9H4N6E7D received 2025-03-04T10:02:41\.118Z \(from the replay input\)\n/,
        );
      });

      it('npm run dev: a message parks the run in its sleep, it wakes into its wait, times out and writes the nudge (switchyard send, waits, deliveries)', async () => {
        await withDev(app, { SLA_ASSIGNEE: '21' }, async (dev) => {
          const cli = (...args: string[]) => sh('npx', ['switchyard', ...args], app, 60_000, { PORT: String(dev.port) });
          const sent = await cli('send', 'message.received', '--set', 'data.id=9001');
          expect(sent.code, sent.out).toBe(0);
          const key = /accepted message\.received (\S+)/.exec(sent.out)?.[1];
          expect(key, sent.out).toBeDefined();
          await dev.waitFor(/"handler":"follow-up-nudge".*"wait":"cool-off","kind":"sleep".*"msg":"run parked"/);
          await dev.waitFor(/"handler":"follow-up-nudge".*"wait":"reply","kind":"wait-for-event".*"msg":"run parked"/);
          const waits = await cli('waits', '--handler', 'follow-up-nudge', '--json');
          expect(waits.code, waits.out).toBe(0);
          expect((JSON.parse(waits.stdout) as { waits: unknown[] }).waits).toMatchObject([
            { handler: 'follow-up-nudge', name: 'reply', kind: 'wait-for-event', deliveryKey: key },
          ]);
          await waitFor(async () => (await sandboxNotes(dev)).some(([, body]) => body === 'Nudge: 1 unanswered'), 30_000).catch(() => {
            throw new Error(`no nudge was written:\n${dev.output()}`);
          });
          await waitFor(async () => /follow-up-nudge:completed/.test((await cli('deliveries', '--limit', '1')).out), 10_000);
        });
      }, 120_000);
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
