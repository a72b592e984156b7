import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * scripts/worktree-check.sh, the check `npm test` ends with: files a run leaves
 * in the work tree fail the run, named. Run as it is in a git repository of its
 * own (with this repository's .gitignore), never in this work tree.
 */
describe('scripts/worktree-check.sh: files a test run leaves in the work tree', () => {
  let repo: string;
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', GIT_CONFIG_NOSYSTEM: '1' };
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { cwd: repo, encoding: 'utf8', env });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const check = (...args: string[]) => run('sh', ['scripts/worktree-check.sh', ...args]);
  const report = () => JSON.parse(readFileSync(join(repo, 'test-results', 'worktree.json'), 'utf8')) as unknown;
  const save = (f: string, text = 'x\n') => {
    mkdirSync(join(repo, f, '..'), { recursive: true });
    writeFileSync(join(repo, f), text);
  };

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'sy-worktree-'));
    mkdirSync(join(repo, 'scripts'));
    copyFileSync(join(ROOT, 'scripts', 'worktree-check.sh'), join(repo, 'scripts', 'worktree-check.sh'));
    copyFileSync(join(ROOT, '.gitignore'), join(repo, '.gitignore'));
    save('src/a.ts', 'export const a = 1;\n');
    save('src/b.ts', 'export const b = 1;\n');
    for (const args of [
      ['init', '-q'],
      ['add', '-A'],
      ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'start'],
    ]) {
      expect(run('git', args).status).toBe(0);
    }
    // What a developer has before the run is theirs: an untracked note, a .switchyard/ of `npm run dev`, a change.
    save('notes.txt');
    save('.switchyard/redis.url', 'redis://127.0.0.1:1\n');
    save('src/a.ts', 'export const a = 2;\n');
    mkdirSync(join(repo, 'test-results'));
    expect(check('snapshot', 'test-results/before').status).toBe(0);
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('a run that leaves nothing passes, as one check; the build, reports and caches it writes by design are allowed', () => {
    save('dist/index.js');
    save('test-results/vitest.json', '{}');
    save('node_modules/.vite/results.json', '{}');
    const r = check('compare', 'test-results/before', 'test-results/worktree.json');
    expect(r).toEqual({ status: 0, out: 'worktree: clean (the run left no files in the work tree)\n' });
    expect(report()).toEqual({ numPassedTests: 1, numFailedTests: 0 });
  });

  it('a file a run leaves fails it, naming each: new, ignored (a Redis dump.rdb), in a new folder, under .switchyard/, a tracked file changed', () => {
    save('dump.rdb', 'REDIS0010');
    save('leftover.txt');
    save('tmp/x/y.json', '{}');
    save('.switchyard/dev.json', '{}');
    save('src/b.ts', 'export const b = 2;\n');
    const r = check('compare', 'test-results/before', 'test-results/worktree.json');
    expect(r.status).toBe(1);
    expect(r.out.split('\n')).toEqual([
      'worktree: FAILED, the run left files in the work tree (a test must write under a temporary directory and remove it):',
      '  .switchyard/dev.json',
      '  dump.rdb',
      '  leftover.txt',
      '  src/b.ts',
      '  tmp/x/y.json',
      '',
    ]);
    expect(report()).toEqual({ numPassedTests: 0, numFailedTests: 1 });
  });

  it('the closing line counts it: scripts/totals.mjs adds the failed check to the vitest report', () => {
    save('leftover.txt');
    check('compare', 'test-results/before', 'test-results/worktree.json');
    writeFileSync(join(repo, 'test-results', 'vitest.json'), JSON.stringify({ numPassedTests: 5, numFailedTests: 0, testResults: [] }));
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'totals.mjs'), 'test-results/vitest.json', 'test-results/worktree.json'], {
      cwd: repo,
      encoding: 'utf8',
      env,
    });
    expect({ status: r.status, out: r.stdout }).toEqual({ status: 1, out: '5 passed, 1 failed\n' });
  });

  it('outside a git checkout it says the check did not run and counts nothing', () => {
    rmSync(join(repo, '.git'), { recursive: true, force: true });
    expect(check('snapshot', 'test-results/none').status).toBe(0);
    const r = check('compare', 'test-results/none', 'test-results/worktree.json');
    expect(r).toEqual({ status: 0, out: 'worktree: not a git checkout; files left by the run were not checked\n' });
  });
});
