import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ignoredChange, watchDir, type DirWatcher } from '../../../src/handler/watch-dir.js';
import { waitFor } from '../../support/wait.js';

// The directory watch of `switchyard dev` on a real temporary directory: each burst of
// changes reported once, with the paths relative to the root.
let root: string;
let watcher: DirWatcher | undefined;
let bursts: string[][];
let errors: Error[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'sy-watch-'));
  bursts = [];
  errors = [];
});
afterEach(() => {
  watcher?.close();
  watcher = undefined;
  rmSync(root, { recursive: true, force: true });
});

const watching = (dir = root) => {
  watcher = watchDir(dir, (paths) => bursts.push([...paths].sort()), { debounceMs: 50, onError: (e) => errors.push(e) });
};
/** The paths seen so far, over every burst. */
const seen = () => new Set(bursts.flat());

describe('watchDir', () => {
  it('reports a written file relative to the root', async () => {
    watching();
    writeFileSync(join(root, 'a.ts'), 'export {}');
    await waitFor(() => seen().has('a.ts'));
    expect(errors).toEqual([]);
  });

  it('sees a file saved by writing a new one and renaming it over the old, every time', async () => {
    writeFileSync(join(root, 'h.ts'), '1');
    watching();
    for (const n of [2, 3]) {
      bursts = [];
      writeFileSync(join(root, 'h.ts.new'), String(n));
      renameSync(join(root, 'h.ts.new'), join(root, 'h.ts'));
      await waitFor(() => seen().has('h.ts'));
    }
  });

  it('watches a subdirectory created after it started, and files in it', async () => {
    watching();
    mkdirSync(join(root, 'lib'));
    await waitFor(() => seen().has('lib'));
    writeFileSync(join(root, 'lib', 'helper.ts'), 'export {}');
    await waitFor(() => seen().has(join('lib', 'helper.ts')));
  });

  it("leaves editors' swap and backup files out of what it reports", async () => {
    watching();
    writeFileSync(join(root, '.h.ts.swp'), '');
    writeFileSync(join(root, 'h.ts~'), '');
    writeFileSync(join(root, 'h.ts'), '');
    await waitFor(() => seen().has('h.ts'));
    expect(seen().has('.h.ts.swp')).toBe(false);
    expect(seen().has('h.ts~')).toBe(false);
  });

  it('says so when the watched directory is removed', async () => {
    const dir = join(root, 'handlers');
    mkdirSync(dir);
    watching(dir);
    rmSync(dir, { recursive: true });
    await waitFor(() => errors.length > 0);
    expect(errors.map((e) => e.message)).toContain(`${dir} was removed`);
  });

  it('reports nothing after close', async () => {
    watching();
    watcher?.close();
    writeFileSync(join(root, 'late.ts'), '');
    // A second watch of the same directory sees the next change; the closed one never reported the first.
    const other: string[][] = [];
    const w = watchDir(root, (paths) => other.push([...paths]), { debounceMs: 20 });
    try {
      writeFileSync(join(root, 'later.ts'), '');
      await waitFor(() => other.flat().includes('later.ts'));
    } finally {
      w.close();
    }
    expect(bursts).toEqual([]);
  });
});

describe('ignoredChange', () => {
  it("ignores editors' temporary files and node_modules or .git anywhere in the path", () => {
    for (const p of ['.h.ts.swp', 'h.ts.swx', 'h.ts~', '#h.ts#', '.#h.ts', 'h.ts.tmp', 'h.ts.bak', 'h.ts.orig', '4913', '.DS_Store'])
      expect(ignoredChange(p), p).toBe(true);
    expect(ignoredChange('h.ts___jb_tmp___')).toBe(true);
    expect(ignoredChange(join('node_modules', 'zod', 'index.js'))).toBe(true);
    expect(ignoredChange(join('.git', 'index'))).toBe(true);
  });

  it('keeps handler code and its helpers', () => {
    for (const p of ['h.ts', 'h.mjs', join('lib', 'helper.cts'), 'swap.ts', 'backup.ts', 'README.md'])
      expect(ignoredChange(p), p).toBe(false);
  });
});
