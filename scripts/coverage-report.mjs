// Line coverage of src/, per folder, over the vitest processes of `npm test`
// (scripts/test.sh): each writes its V8 coverage as istanbul JSON
// (coverage-final.json) to a directory of its own; this merges them
// (istanbul-lib-coverage: a line run by either process is covered) and prints
// one row per top-level folder of src/, then the whole of src/ against the goal
// (test/README.md, "Coverage"). Coverage is of in-process code only: the built
// CLI and servers that tests spawn as child processes are not measured.
//
//   node scripts/coverage-report.mjs DIR...            the table (DIR: a reportsDirectory)
//   node scripts/coverage-report.mjs --files FOLDER DIR...   each module of src/FOLDER, lowest first
//
// Writes the figures to test-results/coverage/summary.json too. Reports only:
// never fails the run (its exit code is 0 unless no coverage was found at all).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import libCoverage from 'istanbul-lib-coverage';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const GOAL_OVERALL = 85;
const GOAL_FOLDER = 70;

const args = process.argv.slice(2);
const filesOf = args[0] === '--files' ? args[1] : undefined;
const dirs = filesOf === undefined ? args : args.slice(2);

/** src/-relative path with forward slashes (of a copy of the repository elsewhere too: the part after its src/). */
function srcPath(file) {
  const own = relative(SRC, file).split(sep).join('/');
  if (!own.startsWith('..')) return own;
  const posix = file.split(sep).join('/');
  return posix.includes('/src/') ? posix.slice(posix.lastIndexOf('/src/') + 5) : own;
}
const map = libCoverage.createCoverageMap({});
const found = [];
for (const dir of dirs) {
  const file = join(dir, 'coverage-final.json');
  if (!existsSync(file)) {
    console.log(`coverage: no ${file} (that vitest run wrote no coverage); the figures below leave it out`);
    continue;
  }
  // Keyed by the module's place in src/, so runs of another copy of the repository merge with this one's.
  const data = Object.values(JSON.parse(readFileSync(file, 'utf8'))).map((fc) => ({ ...fc, path: join(SRC, srcPath(fc.path)) }));
  map.merge(Object.fromEntries(data.map((fc) => [fc.path, fc])));
  found.push(dir);
}
if (found.length === 0) {
  console.log('coverage: no coverage data found; nothing to report');
  process.exit(dirs.length === 0 ? 1 : 0);
}

/** The top-level folder of src/ a module is in ('(src)' for src/*.ts). */
const folderOf = (path) => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '(src)');
const pct = (covered, total) => (total === 0 ? 100 : (100 * covered) / total);
const fmt = (n) => `${n.toFixed(1)} %`;
/** A folder's or module's share of lines run ('-' when it has no lines: type declarations, re-exports). */
const share = (covered, total) => (total === 0 ? '-' : fmt(pct(covered, total)));

const rows = new Map();
const modules = [];
for (const file of map.files()) {
  const path = srcPath(file);
  if (path.startsWith('..')) continue;
  const lines = map.fileCoverageFor(file).toSummary().lines;
  modules.push({ path, total: lines.total, covered: lines.covered });
  const row = rows.get(folderOf(path)) ?? { total: 0, covered: 0, modules: 0, unrun: 0 };
  row.total += lines.total;
  row.covered += lines.covered;
  row.modules += 1;
  if (lines.total > 0 && lines.covered === 0) row.unrun += 1;
  rows.set(folderOf(path), row);
}

if (filesOf !== undefined) {
  const mine = modules.filter((m) => m.path.startsWith(`${filesOf}/`) || (filesOf === '(src)' && !m.path.includes('/')));
  for (const m of mine.sort((a, b) => pct(a.covered, a.total) - pct(b.covered, b.total))) {
    console.log(
      `${share(m.covered, m.total).padStart(7)}  ${String(m.total - m.covered).padStart(4)} of ${String(m.total).padEnd(4)} lines not run  src/${m.path}`,
    );
  }
  process.exit(0);
}

const total = [...rows.values()].reduce((a, r) => ({ total: a.total + r.total, covered: a.covered + r.covered }), { total: 0, covered: 0 });
const overall = pct(total.covered, total.total);
const folders = [...rows.entries()].sort(([a], [b]) => a.localeCompare(b));
const low = folders.filter(([, r]) => pct(r.covered, r.total) < GOAL_FOLDER).map(([f]) => f);

console.log('');
console.log(`---- line coverage of src/ (V8, in-process code only; merged from ${found.join(', ')}) ----`);
console.log(`${'folder'.padEnd(12)} ${'lines'.padStart(6)} ${'covered'.padStart(8)} ${'%'.padStart(8)}  modules (not run)`);
for (const [folder, r] of folders) {
  const mark = pct(r.covered, r.total) < GOAL_FOLDER ? `  < ${GOAL_FOLDER} %` : '';
  console.log(
    `${folder.padEnd(12)} ${String(r.total).padStart(6)} ${String(r.covered).padStart(8)} ${share(r.covered, r.total).padStart(8)}  ${r.modules} (${r.unrun})${mark}`,
  );
}
console.log(
  `${'src/'.padEnd(12)} ${String(total.total).padStart(6)} ${String(total.covered).padStart(8)} ${fmt(overall).padStart(8)}  ${modules.length}`,
);
console.log(
  `coverage goal: ${GOAL_OVERALL} % of lines overall (${overall >= GOAL_OVERALL ? 'met' : 'not met'}), no folder under ${GOAL_FOLDER} % (${
    low.length === 0 ? 'met' : `not met: ${low.join(', ')}`
  }); per module: node scripts/coverage-report.mjs --files FOLDER ${found.join(' ')}`,
);

mkdirSync(join(ROOT, 'test-results', 'coverage'), { recursive: true });
writeFileSync(
  join(ROOT, 'test-results', 'coverage', 'summary.json'),
  `${JSON.stringify(
    {
      overall: { ...total, pct: overall },
      folders: Object.fromEntries(folders.map(([f, r]) => [f, { ...r, pct: pct(r.covered, r.total) }])),
      modules,
    },
    null,
    2,
  )}\n`,
);
