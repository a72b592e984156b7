// Prints vitest JSON reports as one plain line: "N passed, N failed[, N skipped (why)]".
// scripts/lint.sh writes its four checks (eslint, layers, tests, format) in the same shape.
// A skipped test is never silent: the line names the files it is in and the
// SKIP_* variables that asked for it (a test skipped without one is named too).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

let passed = 0;
let failed = 0;
const skippedIn = new Map();
const unexplained = [];
for (const arg of process.argv.slice(2)) {
  // `report.json@N`: the report of a run that exited with status N (scripts/test.sh).
  const [file, rc] = /^(.*)@(\d+)$/.exec(arg)?.slice(1) ?? [arg, undefined];
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.error(`totals: no test report at ${file} (that run did not finish)`);
    failed += 1;
    continue;
  }
  passed += report.numPassedTests ?? 0;
  // Files that failed to load count as failures even when no test inside them ran.
  const failedHere =
    (report.numFailedTests ?? 0) +
    (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
  failed += failedHere;
  // A run that exited non-zero with no failed test had an error outside any test (vitest: "Unhandled Errors"),
  // which its JSON report does not carry: one failure, named.
  if (rc !== undefined && rc !== '0' && failedHere === 0) {
    failed += 1;
    unexplained.push(`${basename(file)}: its run exited ${rc} with no failed test, an unhandled error (see "Unhandled Errors" above)`);
  }
  for (const r of report.testResults ?? []) {
    const n = (r.assertionResults ?? []).filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo').length;
    if (n > 0) skippedIn.set(basename(r.name ?? '?'), (skippedIn.get(basename(r.name ?? '?')) ?? 0) + n);
  }
}
const skipped = [...skippedIn.values()].reduce((a, b) => a + b, 0);
const asked = Object.keys(process.env)
  .filter((k) => /^SKIP_/.test(k) && process.env[k] === '1')
  .sort();
const why = [
  ...unexplained,
  ...(skipped ? [`skipped: ${[...skippedIn].map(([f, n]) => `${f} ${n}`).join(', ')}`] : []),
  ...(asked.length ? [`asked by ${asked.map((k) => `${k}=1`).join(' ')}`] : []),
].join('; ');
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${why ? ` (${why})` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
