import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** One module's istanbul coverage: a statement on each given line, run `hits[i]` times. */
function fileCoverage(path: string, lines: number[], hits: number[]) {
  const statementMap = Object.fromEntries(lines.map((line, i) => [i, { start: { line, column: 0 }, end: { line, column: 10 } }]));
  const s = Object.fromEntries(hits.map((n, i) => [i, n]));
  return { path, statementMap, fnMap: {}, branchMap: {}, s, f: {}, b: {} };
}

/**
 * scripts/coverage-report.mjs, the table `npm test` prints before its closing
 * line: the two vitest runs' coverage merged (a line either ran is covered),
 * one row per folder of src/, the goal checked. Run on a copy of the script in
 * a directory of its own (its src/ and test-results/ are that directory's).
 */
describe('scripts/coverage-report.mjs: line coverage of src/ per folder, merged over the runs', () => {
  let repo: string;
  const run = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['scripts/coverage-report.mjs', ...args], { cwd: repo, encoding: 'utf8' });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const writeRun = (dir: string, modules: ReturnType<typeof fileCoverage>[]) => {
    mkdirSync(join(repo, dir), { recursive: true });
    writeFileSync(join(repo, dir, 'coverage-final.json'), JSON.stringify(Object.fromEntries(modules.map((m) => [m.path, m]))));
  };
  const row = (out: string, folder: string) => out.split('\n').find((l) => l.startsWith(`${folder} `)) ?? '';

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'sy-coverage-'));
    mkdirSync(join(repo, 'scripts'));
    copyFileSync(join(ROOT, 'scripts', 'coverage-report.mjs'), join(repo, 'scripts', 'coverage-report.mjs'));
    symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('merges two runs: a line either run ran is covered; the goal is met when every folder is at 70 % or more', () => {
    const q = join(repo, 'src', 'queue', 'ingest.ts');
    writeRun('main', [fileCoverage(q, [1, 2, 3, 4], [1, 1, 0, 0]), fileCoverage(join(repo, 'src', 'api', 'client.ts'), [1, 2], [3, 1])]);
    // The fault run covers the other two lines of the queue module; its paths are those of another copy of the repository.
    writeRun('faults', [fileCoverage('/elsewhere/checkout/src/queue/ingest.ts', [1, 2, 3, 4], [0, 0, 2, 1])]);
    const r = run('main', 'faults');
    expect(r.status).toBe(0);
    expect(row(r.out, 'queue')).toMatch(/^queue\s+4\s+4\s+100\.0 %\s+1 \(0\)$/);
    expect(row(r.out, 'api')).toMatch(/^api\s+2\s+2\s+100\.0 %/);
    expect(row(r.out, 'src/')).toMatch(/^src\/\s+6\s+6\s+100\.0 %\s+2$/);
    expect(r.out).toContain('coverage goal: 85 % of lines overall (met), no folder under 70 % (met)');
    const summary = JSON.parse(readFileSync(join(repo, 'test-results', 'coverage', 'summary.json'), 'utf8')) as {
      overall: { total: number; covered: number };
    };
    expect(summary.overall).toMatchObject({ total: 6, covered: 6 });
  });

  it('names a folder under 70 % and a module no test ran, and says the goal is not met', () => {
    writeRun('main', [
      fileCoverage(join(repo, 'src', 'runtime', 'redis.ts'), [1, 2, 3, 4], [0, 0, 0, 0]),
      fileCoverage(join(repo, 'src', 'runtime', 'http.ts'), [1, 2], [1, 1]),
      fileCoverage(join(repo, 'src', 'worker', 'runner.ts'), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], Array<number>(10).fill(1)),
    ]);
    const r = run('main');
    expect(row(r.out, 'runtime')).toMatch(/^runtime\s+6\s+2\s+33\.3 %\s+2 \(1\)\s+< 70 %$/);
    expect(row(r.out, 'worker')).not.toContain('< 70 %');
    expect(r.out).toContain('coverage goal: 85 % of lines overall (not met), no folder under 70 % (not met: runtime)');
    const files = run('--files', 'runtime', 'main');
    expect(files.out.split('\n')[0]).toMatch(/0\.0 %\s+4 of 4\s+lines not run\s+src\/runtime\/redis\.ts/);
  });

  it('says which run wrote no coverage, and reports without it', () => {
    writeRun('main', [fileCoverage(join(repo, 'src', 'api', 'client.ts'), [1], [1])]);
    const r = run('main', 'faults');
    expect(r.status).toBe(0);
    expect(r.out).toContain(`coverage: no ${join('faults', 'coverage-final.json')} (that vitest run wrote no coverage)`);
    expect(r.out).toContain('merged from main)');
  });
});
