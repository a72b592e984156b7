import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * scripts/setup.sh and scripts/build.sh as they are, in a one-file project of
 * their own (the worktree's shared dist/ is never touched): real npm, real tsc.
 */
describe('scripts/setup.sh builds only when something changed', () => {
  let project: string;
  const setup = () => {
    const r = spawnSync('sh', ['scripts/setup.sh'], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const mtime = (f: string) => statSync(join(project, f)).mtimeMs;
  const save = (f: string, text: string) => writeFileSync(join(project, f), text);

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'sy-setup-'));
    mkdirSync(join(project, 'scripts'));
    mkdirSync(join(project, 'src'));
    for (const f of ['setup.sh', 'build.sh', 'copy-assets.mjs']) copyFileSync(join(ROOT, 'scripts', f), join(project, 'scripts', f));
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'p', private: true, type: 'module', scripts: { build: 'sh scripts/build.sh' } }),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, types: [] } }),
    );
    writeFileSync(
      join(project, 'tsconfig.build.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
    );
    writeFileSync(join(project, 'src', 'a.ts'), 'export const a: number = 1;\n');
    // Installed already: the lock file is older than node_modules' record of it, so set-up runs no npm ci.
    writeFileSync(join(project, 'package-lock.json'), '{}\n');
    utimesSync(join(project, 'package-lock.json'), new Date(2000, 0, 1), new Date(2000, 0, 1));
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('builds the first time, skips tsc while nothing changed, and builds again after a change under src/', () => {
    const first = setup();
    expect(first.status, first.out).toBe(0);
    expect(readFileSync(join(project, 'dist', 'a.js'), 'utf8')).toMatch(/a = 1/);
    const built = { js: mtime('dist/a.js'), stamp: mtime('dist/.build-stamp') };

    const second = setup();
    expect(second.status, second.out).toBe(0);
    expect(second.out).toMatch(/setup: dist\/ is up to date/);
    expect({ js: mtime('dist/a.js'), stamp: mtime('dist/.build-stamp') }).toEqual(built);

    save('src/a.ts', 'export const a: number = 2;\n');
    const third = setup();
    expect(third.status, third.out).toBe(0);
    expect(third.out).not.toMatch(/up to date/);
    expect(readFileSync(join(project, 'dist', 'a.js'), 'utf8')).toMatch(/a = 2/);
    expect(mtime('dist/.build-stamp')).toBeGreaterThan(built.stamp);
  }, 120_000);

  it('a deleted module rebuilds and leaves no output of it in dist/ (which would be packed); a missing input rebuilds too', () => {
    save('src/b.ts', 'export const b: number = 1;\n');
    expect(setup().status).toBe(0);
    expect(statSync(join(project, 'dist', 'b.js')).isFile()).toBe(true);
    rmSync(join(project, 'src', 'b.ts'));
    const after = setup();
    expect(after.status, after.out).toBe(0);
    expect(after.out).not.toMatch(/up to date/);
    expect(['b.js', 'b.d.ts', 'b.js.map'].filter((f) => statSync(join(project, 'dist', f), { throwIfNoEntry: false }))).toEqual([]);
    expect(statSync(join(project, 'dist', 'a.js')).isFile()).toBe(true);
    // An input the check reads is gone: set-up builds (and says why it fails) instead of trusting the stamp.
    const helper = readFileSync(join(project, 'scripts', 'copy-assets.mjs'));
    rmSync(join(project, 'scripts', 'copy-assets.mjs'));
    try {
      expect(setup().out).not.toMatch(/up to date/);
    } finally {
      writeFileSync(join(project, 'scripts', 'copy-assets.mjs'), helper);
    }
  }, 120_000);

  it('a failed build writes no stamp: the next set-up builds again', () => {
    save('src/a.ts', 'export const a: number = "not a number";\n');
    for (let i = 0; i < 2; i++) {
      const failed = setup();
      expect(failed.status).not.toBe(0);
      expect(failed.out).toMatch(/TS2322/);
    }
  }, 120_000);
});

/** scripts/totals.mjs, the closing line of `npm test`: skipped tests are counted and said why, never silent. */
describe('scripts/totals.mjs (the closing line)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-totals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const totals = (reports: unknown[], env: Record<string, string> = {}) => {
    const files = reports.map((r, i) => {
      const f = join(dir, `r${i}.json`);
      writeFileSync(f, JSON.stringify(r));
      return f;
    });
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'totals.mjs'), ...files], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', ...env },
    });
    return { status: r.status, line: r.stdout.trim() };
  };

  it('counts skipped tests and names their files and the SKIP_ variable that asked for them', () => {
    const browser = {
      numPassedTests: 5,
      numFailedTests: 0,
      testResults: [
        {
          name: '/r/test/e2e/admin/board.browser.test.ts',
          status: 'passed',
          assertionResults: [{ status: 'skipped' }, { status: 'skipped' }, { status: 'skipped' }],
        },
        { name: '/r/test/e2e/admin/deliveries.browser.test.ts', status: 'passed', assertionResults: [{ status: 'pending' }] },
        { name: '/r/test/unit/x.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }] },
      ],
    };
    expect(totals([browser], { SKIP_BROWSER: '1' })).toEqual({
      status: 0,
      line: '5 passed, 0 failed, 4 skipped (skipped: board.browser.test.ts 3, deliveries.browser.test.ts 1; asked by SKIP_BROWSER=1)',
    });
    expect(totals([{ numPassedTests: 2, numFailedTests: 1, testResults: [] }])).toEqual({ status: 1, line: '2 passed, 1 failed' });
  });

  it('counts a run that exited non-zero with every test passed (an unhandled error) as a failure, and says so', () => {
    const f = join(dir, 'unhandled.json');
    writeFileSync(f, JSON.stringify({ numPassedTests: 7, numFailedTests: 0, testResults: [] }));
    const run = (arg: string) => spawnSync(process.execPath, [join(ROOT, 'scripts', 'totals.mjs'), arg], { encoding: 'utf8' });
    const failedRun = run(`${f}@1`);
    expect(failedRun.status).toBe(1);
    expect(failedRun.stdout.trim()).toBe(
      '7 passed, 1 failed (unhandled.json: its run exited 1 with no failed test, an unhandled error (see "Unhandled Errors" above))',
    );
    expect(run(`${f}@0`)).toMatchObject({ status: 0, stdout: '7 passed, 0 failed\n' });
  });
});
