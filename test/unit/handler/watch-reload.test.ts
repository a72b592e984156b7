import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { handlerSnapshot, HandlerSet } from '../../../src/handler/set.js';
import type { DirWatcher } from '../../../src/handler/watch-dir.js';
import { watchHandlers } from '../../../src/handler/watch-reload.js';
import { waitFor } from '../../support/wait.js';

// `switchyard dev`'s watch loop on a handlers directory of a project of its own
// (node_modules/switchyard is this repository; CommonJS modules, which a vitest
// process loads afresh): a save reloads the set, a broken save keeps it and says why.
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let project: string;
let watcher: DirWatcher | undefined;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sy-watch-reload-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'watch-reload-test', private: true }));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
});
afterAll(() => rmSync(project, { recursive: true, force: true }));
afterEach(() => {
  watcher?.close();
  watcher = undefined;
});

const handler = (id: string, body = 'async handle() {}') =>
  `const { defineHandler } = require('switchyard');\nmodule.exports = defineHandler({ id: '${id}', on: ['lead.won'], ${body} });\n`;

async function watched(name: string) {
  const dir = join(project, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.cjs'), handler('a'));
  const loaded = await loadHandlerDir(dir);
  const set = new HandlerSet(
    handlerSnapshot(
      loaded.handlers.map((l) => l.handler),
      undefined,
      {},
      [],
    ),
  );
  const said: string[] = [];
  const warned: string[] = [];
  watcher = watchHandlers({ dir, env: {}, set, say: (l) => said.push(l), warn: (t) => warned.push(t), debounceMs: 30 });
  return { dir, set, said, warned };
}

describe('watchHandlers', () => {
  it('a new handler saved in the directory is loaded into the running set, and the line says what was added', async () => {
    const { dir, set, said } = await watched('adds');
    writeFileSync(join(dir, 'b.cjs'), handler('b'));
    await waitFor(() => said.some((l) => l.includes('added b')));
    expect(said.find((l) => l.includes('added b'))).toMatch(/^reloaded handlers: a, b \(\d+ ms\); added b$/);
    expect([...set.current().handlers.keys()].sort()).toEqual(['a', 'b']);
  });

  it('a save that does not load keeps the previous handlers and says why and how to retry', async () => {
    const { dir, set, warned } = await watched('broken');
    const before = set.current();
    writeFileSync(join(dir, 'a.cjs'), handler('a', 'async handle() {'));
    await waitFor(() => warned.some((t) => t.startsWith('keeping the previous handlers running')));
    expect(warned[0]).toMatch(/a\.cjs:\d+:\d+: syntax error: /);
    expect(warned[1]).toMatch(/^keeping the previous handlers running \(\d+ ms\); save again to retry$/);
    expect(set.current()).toBe(before);
  });

  it('says when the directory it watches is gone, and to restart dev', async () => {
    const { dir, warned } = await watched('removed');
    rmSync(dir, { recursive: true });
    await waitFor(() => warned.some((t) => t.startsWith('stopped watching')));
    expect(warned).toContain(`stopped watching ${dir} for changes: ${dir} was removed; restart \`switchyard dev\``);
  });
});
