import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlerSnapshot, HandlerSet } from '../../../src/handler/set.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { reloadHandlers } from '../../../src/handler/reload.js';
import { describeReload } from '../../../src/handler/watch-reload.js';

/**
 * reloadHandlers on real modules in a project of its own (node_modules/switchyard
 * is this repository): what `switchyard dev` does on a save, without the watcher.
 * CommonJS modules here: in a vitest process ES modules load through vite's
 * module runner, not Node's loader, so their reload (and helper syntax errors)
 * are tested end to end through the built CLI (test/e2e/cli/dev.test.ts).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let project: string;
let n = 0;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sy-reload-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'reload-test', private: true, type: 'module' }));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(project, 'node_modules', 'zod'), 'dir');
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** A fresh handlers directory holding `files`; `write` changes them later. */
function handlersDir(files: Record<string, string>) {
  const dir = join(project, `handlers-${++n}`);
  const write = (more: Record<string, string>) => {
    for (const [name, text] of Object.entries(more)) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
  };
  write(files);
  return { dir, write };
}

async function running(dir: string, env: Record<string, string> = {}): Promise<HandlerSet> {
  const loaded = await loadHandlerDir(dir);
  return new HandlerSet(
    handlerSnapshot(
      loaded.handlers.map((l) => l.handler),
      undefined,
      env,
      loaded.schedules.map((l) => l.schedule),
    ),
  );
}

/** A handler whose id comes from a helper module, so a reload that misses the helper shows in the ids. */
const HANDLER = `const { defineHandler } = require('switchyard');
const { NAME } = require('./lib/name.cjs');
module.exports = defineHandler({ id: NAME, on: ['lead.won'], async handle() {} });
`;
const name = (id: string) => ({ 'lib/name.cjs': `module.exports = { NAME: '${id}' };\n` });

describe('reloadHandlers', () => {
  it('loads the modules and the helpers they require afresh, and says what was added and removed', async () => {
    const { dir, write } = handlersDir({ 'h.cjs': HANDLER, ...name('one') });
    const set = await running(dir);
    write(name('two'));
    expect(await reloadHandlers({ dir, env: {}, set })).toMatchObject({ ok: true, ids: ['two'], added: ['two'], removed: ['one'] });
    expect([...set.current().handlers.keys()]).toEqual(['two']);
  });

  it('keeps the previous version when a module does not load, with file:line:column and a code frame', async () => {
    const { dir, write } = handlersDir({ 'h.cjs': HANDLER, ...name('one') });
    const set = await running(dir);
    const before = set.current();
    write({ 'h.cjs': HANDLER.replace('handle() {}', 'handle() {') });
    const r = await reloadHandlers({ dir, env: {}, set });
    expect(r.ok ? '' : r.message).toMatch(/h\.cjs:3:\d+: syntax error: /);
    expect(r.ok ? '' : r.message).toMatch(/^> 3 \| module\.exports/m);
    expect(set.current()).toBe(before);
  });

  it('keeps the previous version on a duplicate id or a bad setting', async () => {
    const settings =
      `const { z } = require('zod');\nconst { defineHandler } = require('switchyard');\n` +
      `module.exports = defineHandler({ id: 'b', on: ['lead.won'], settings: z.object({ B_LIMIT: z.coerce.number().int() }), async handle() {} });\n`;
    const { dir, write } = handlersDir({ 'a.cjs': HANDLER, ...name('a'), 'b.cjs': settings });
    const set = await running(dir, { B_LIMIT: '3' });
    const before = set.current();
    write(name('b'));
    const dup = await reloadHandlers({ dir, env: { B_LIMIT: '3' }, set });
    expect(dup.ok ? '' : dup.message).toMatch(/handler id "b" is already defined/);
    write(name('a'));
    const bad = await reloadHandlers({ dir, env: { B_LIMIT: 'many' }, set });
    expect(bad.ok ? '' : bad.message).toMatch(/B_LIMIT/);
    expect(set.current()).toBe(before);
    expect(await reloadHandlers({ dir, env: { B_LIMIT: '4' }, set })).toMatchObject({ ok: true, ids: ['a', 'b'], added: [], removed: [] });
    expect(set.current().settings.get('b')).toEqual({ B_LIMIT: 4 });
  });

  it('reloads schedules too, and its line (what `switchyard dev` prints) names them and what waits for a restart', async () => {
    const schedule = (id: string, every: string) =>
      `const { defineSchedule } = require('switchyard');\n` +
      `module.exports = defineSchedule({ id: '${id}', every: '${every}', async handle() {} });\n`;
    const { dir, write } = handlersDir({
      'a.cjs': HANDLER,
      ...name('a'),
      'digest.cjs': schedule('digest', '1h'),
      'old.cjs': schedule('old', '1h'),
    });
    const set = await running(dir);
    write({ 'digest.cjs': schedule('digest', '30m'), 'old.cjs': schedule('fresh', '1h') });
    const r = await reloadHandlers({ dir, env: {}, set });
    expect(r).toMatchObject({
      ok: true,
      ids: ['a'],
      added: [],
      removed: [],
      schedules: { ids: ['digest', 'fresh'], added: ['fresh'], removed: ['old'], retimed: ['digest'] },
    });
    expect(set.current().schedules.map((s) => [s.id, s.everyMs])).toEqual([
      ['digest', 1_800_000],
      ['fresh', 3_600_000],
    ]);
    expect(describeReload(r as Extract<typeof r, { ok: true }>).replace(/\(\d+ ms\)/, '(N ms)')).toBe(
      'reloaded handlers: a; schedules: digest, fresh (N ms); ' +
        'added schedule fresh (its first run waits for a restart: schedules are set up when the worker starts); ' +
        'removed schedule old (its runs are skipped until a restart removes it); ' +
        'new timing of schedule digest applies after a restart (its new code runs now)',
    );
    // A reload that changes only code: the schedules are still named.
    const again = await reloadHandlers({ dir, env: {}, set });
    expect(describeReload(again as Extract<typeof again, { ok: true }>)).toMatch(
      /^reloaded handlers: a; schedules: digest, fresh \(\d+ ms\)$/,
    );
  });
});
