import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

/**
 * Loading handler modules through the built CLI (npm run build first), in a
 * project of its own whose node_modules/switchyard is this repository: what a
 * person sees when a module is broken or the directory is wrong.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let project: string;
let n = 0;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sy-loader-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'loader-test', private: true, type: 'module' }));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
  // Handler settings are zod schemas: the project installs zod beside switchyard.
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(project, 'node_modules', 'zod'), 'dir');
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** A fresh HANDLERS_DIR (relative to the project) holding `files`. */
function handlersDir(files: Record<string, string>): string {
  const dir = `handlers-${++n}`;
  mkdirSync(join(project, dir));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(project, dir, name), text);
  return dir;
}

async function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const p = runCli(args, env, project);
  const code = await p.exited;
  return { code, out: p.output() };
}

const GOOD = `import { defineHandler } from 'switchyard';
export default defineHandler({ id: 'good', on: ['message.received'], async handle() {} });
`;

describe('handler modules that cannot be loaded', () => {
  it.each([
    ['broken.ts', 'TypeScript through tsx'],
    ['broken.mjs', 'an ES module, whose SyntaxError carries no location'],
    ['broken.cjs', 'CommonJS'],
  ])('a syntax error in %s (%s) shows file:line:column, the message and a code frame, no stack', async (name) => {
    const dir = handlersDir({
      'a-good.ts': GOOD,
      [name]: `// a handler with a typo\nexport default {\n  id: 'broken',\n  on: ['message.received'] 3,\n};\n`,
    });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
    expect(code).toBe(1);
    expect(out).toContain(`switchyard handlers: ${dir}/${name}:4:28: syntax error: Expected "}" but found "3"`);
    expect(out).toContain(`> 4 |   on: ['message.received'] 3,\n    |                            ^`);
    expect(out).toContain("  3 |   id: 'broken',");
    expect(out).not.toMatch(/^\s+at /m);
  });

  it('an error thrown while the module loads names file:line:column', async () => {
    const dir = handlersDir({
      'throws.ts': `const n: number = 1;\nif (n) throw new Error('cannot start: FOO is unset');\nexport default 1;\n`,
    });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
    expect(code).toBe(1);
    expect(out).toContain(`${dir}/throws.ts:2:14: cannot start: FOO is unset`);
    expect(out).not.toMatch(/^\s+at /m);
  });

  it('a handler exported by name, not as the default, is an error naming the file and the fix', async () => {
    const dir = handlersDir({
      'a-good.ts': GOOD,
      'named.ts': `import { defineHandler } from 'switchyard';\nexport const tagVip = defineHandler({ id: 'tag-vip', on: ['conversation.closed'], async handle() {} });\n`,
    });
    for (const command of ['handlers', 'doctor']) {
      const { code, out } = await run([command], { HANDLERS_DIR: dir });
      expect(code).toBe(1);
      expect(out).toContain(
        `${dir}/named.ts: "tagVip" is a named export, but only the default export is loaded as a handler; write export default defineHandler(`,
      );
    }
  });

  it('a module without any handler is listed as a helper, not skipped silently', async () => {
    const dir = handlersDir({ 'a-good.ts': GOOD, 'util.ts': 'export const twice = (n: number) => 2 * n;\n' });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
    expect(code).toBe(0);
    expect(out).toMatch(/^good\n/);
    expect(out).toContain(`helper modules (no handler exported): ${dir}/util.ts`);
  });

  it('a default export that is not a handler nor shaped like one (a function, an object of utilities) is a helper', async () => {
    const dir = handlersDir({
      'a-good.ts': GOOD,
      'fn.cjs': 'module.exports = function helper(n) { return 2 * n; };\n',
      'obj.cjs': 'const util = (n) => 2 * n;\nmodule.exports = { util };\n',
      'fn.mjs': 'export default function (n) { return 2 * n; }\n',
      'obj.ts': 'export default { x: 1 };\n',
    });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
    expect(out).not.toContain('not a handler');
    expect(code).toBe(0);
    expect(out).toMatch(/^good\n/);
    expect(out).toContain(
      `helper modules (no handler exported): ${['fn.cjs', 'fn.mjs', 'obj.cjs', 'obj.ts'].map((f) => `${dir}/${f}`).join(', ')}`,
    );
  });

  it.each([
    ['plain.cjs', `module.exports = { id: 'plain', on: ['lead.won'], async handle() {} };\n`],
    ['plain.mjs', `export default { id: 'plain', on: ['lead.won'], async handle() {} };\n`],
  ])(
    'a default export shaped like a handler definition but not made with defineHandler (%s) is an error naming the fix',
    async (name, text) => {
      const dir = handlersDir({ 'a-good.ts': GOOD, [name]: text });
      const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
      expect(code).toBe(1);
      expect(out).toContain(
        `${dir}/${name}: the default export is a plain object, not a handler: wrap it in defineHandler; write export default defineHandler(`,
      );
    },
  );
});

describe('a HANDLERS_DIR that does not exist', () => {
  it('handlers and doctor exit 1 naming the directory and what to do', async () => {
    const h = await run(['handlers'], { HANDLERS_DIR: 'no-such-dir' });
    expect(h.code).toBe(1);
    expect(h.out).toContain(`switchyard handlers: HANDLERS_DIR no-such-dir does not exist (${join(project, 'no-such-dir')}); create it`);
    const d = await run(['doctor'], { HANDLERS_DIR: 'no-such-dir', REDIS_URL: testRedisUrl() });
    expect(d.code).toBe(1);
    expect(d.out).toMatch(/FAIL {2}handlers: HANDLERS_DIR no-such-dir does not exist/);
  });

  it('stops the start-up of a worker (exit 1), and so does a broken module', async () => {
    const missing = await run(['work'], { HANDLERS_DIR: 'no-such-dir', REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('ld') });
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('HANDLERS_DIR no-such-dir does not exist');
    const dir = handlersDir({
      'named.mjs': `import { defineHandler } from 'switchyard';\nexport const h = defineHandler({ id: 'h', on: ['lead.won'], async handle() {} });\n`,
    });
    const named = await run(['work'], { HANDLERS_DIR: dir, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('ld') });
    expect(named.code).toBe(1);
    expect(named.out).toContain(`${dir}/named.mjs: "h" is a named export`);
  });
});

const WITH_SETTINGS = `import { z } from 'zod';
import { defineHandler } from 'switchyard';
export default defineHandler({
  id: 'tagger',
  on: ['contact.created'],
  settings: z.object({
    TAG_NAME: z.string().min(1).describe('label to add'),
    TAG_DELAY_DAYS: z.coerce.number().positive('expected a positive number of days').default(2),
  }),
  retry: { attempts: 3, backoff: { type: 'fixed', delay: '5s' } },
  timeout: '45s',
  async handle(event, ctx) { ctx.log.info({ tag: ctx.settings.TAG_NAME }); },
});
`;

describe('handler settings, retry and timeout', () => {
  it('handlers lists each setting (required or its default), the retries and the timeout', async () => {
    const dir = handlersDir({ 'a-good.ts': GOOD, 'tagger.ts': WITH_SETTINGS });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir, TAG_NAME: 'vip' });
    expect(code).toBe(0);
    expect(out).toContain(
      'good\n  on:        message.received\n  abilities: (none declared)\n  settings:  (none)\n' +
        '  retry:     10 attempts, exponential from 2s (dead-lettered after ~17m of back-off)\n  timeout:   (none)\n',
    );
    expect(out).toContain(
      'tagger\n  on:        contact.created\n  abilities: (none declared)\n' +
        '  settings:  TAG_NAME (required): label to add\n             TAG_DELAY_DAYS (default 2)\n' +
        '  retry:     3 attempts, every 5s (dead-lettered after ~10s of back-off)\n  timeout:   45s\n',
    );
    const json = await run(['handlers', '--json'], { HANDLERS_DIR: dir, TAG_NAME: 'vip' });
    const rows = JSON.parse(json.out) as {
      id: string;
      settings: unknown;
      retry: unknown;
      timeoutMs: number | null;
      settingsProblems: string[];
    }[];
    expect(rows.find((r) => r.id === 'tagger')).toMatchObject({
      settings: [
        { name: 'TAG_NAME', required: true, description: 'label to add' },
        { name: 'TAG_DELAY_DAYS', required: false, default: 2 },
      ],
      retry: { attempts: 3, backoff: { type: 'fixed', delay: 5_000 } },
      timeoutMs: 45_000,
      settingsProblems: [],
    });
  });

  it('a missing or bad setting stops the start-up of a worker naming the handler, the variable and what is expected', async () => {
    const dir = handlersDir({ 'tagger.ts': WITH_SETTINGS });
    const env = { HANDLERS_DIR: dir, REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('ld') };
    const missing = await run(['work'], env);
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('switchyard work: handler "tagger" settings: TAG_NAME is not set: expected string\n');
    expect(missing.out).not.toMatch(/^\s+at /m);
    const bad = await run(['work'], { ...env, TAG_NAME: 'vip', TAG_DELAY_DAYS: '-4' });
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(
      'switchyard work: handler "tagger" settings: TAG_DELAY_DAYS is invalid: expected a positive number of days\n',
    );
    expect(bad.out).not.toContain('-4');
    // handlers and doctor say the same (doctor with what to do).
    const listed = await run(['handlers'], { ...env, TAG_NAME: 'vip', TAG_DELAY_DAYS: '-4' });
    expect(listed.code).toBe(1);
    expect(listed.out).toContain('  invalid:   TAG_DELAY_DAYS is invalid: expected a positive number of days\n');
    const doctor = await run(['doctor'], { ...env, TAG_NAME: 'vip', TAG_DELAY_DAYS: '-4' });
    expect(doctor.code).toBe(1);
    expect(doctor.out).toContain(
      'FAIL  handler tagger settings: TAG_DELAY_DAYS is invalid: expected a positive number of days\n      fix: set them in the environment',
    );
  });

  it("a settings schema naming one of Switchyard's secrets stops loading: secrets never reach handlers", async () => {
    const dir = handlersDir({
      'leaky.ts':
        `import { z } from 'zod';\nimport { defineHandler } from 'switchyard';\n` +
        `export default defineHandler({ id: 'leaky', on: ['lead.won'], settings: z.object({ WORKSPACE_API_TOKEN: z.string() }), async handle() {} });\n`,
    });
    const { code, out } = await run(['handlers'], { HANDLERS_DIR: dir });
    expect(code).toBe(1);
    expect(out).toContain(`${dir}/leaky.ts`);
    expect(out).toContain(
      `handler "leaky": settings name WORKSPACE_API_TOKEN, one of Switchyard's own secrets; secrets never reach handlers`,
    );
    expect(out).not.toMatch(/^\s+at /m);
  });
});

describe('switchyard --version', () => {
  it.each(['--version', '-v'])('%s prints the package version', async (flag) => {
    const { code, out } = await run([flag], {});
    expect(code).toBe(0);
    expect(out).toBe(`${VERSION}\n`);
  });
});
