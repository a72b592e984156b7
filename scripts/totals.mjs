// Prints vitest's JSON report as one plain line: "N passed, N failed[, N skipped]".
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error(`totals: no test report at ${file} (the run did not finish)`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// Files that failed to load count as failures even when no test inside them ran.
const failed = (report.numFailedTests ?? 0) + (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
