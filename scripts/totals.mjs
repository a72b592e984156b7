// Prints vitest JSON reports as one plain line: "N passed, N failed[, N skipped]".
// scripts/lint.sh writes its two checks (eslint, layers) in the same shape.
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
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
  failed += (report.numFailedTests ?? 0) + (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
