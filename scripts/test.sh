#!/bin/sh
# The whole test suite: set-up, lint, then two vitest runs side by side: the
# projects unit, integration (a real redis-server), e2e (the built CLI, child
# processes, the packed tarball, a browser) and types, and the faults project
# (test/faults: Redis kills, worker SIGKILLs, storms; one file at a time) in a
# vitest process of its own. Most tests wait on processes, timers and Redis
# rather than compute, so the two share the machine's cores; the first prints
# as it goes, the fault suite's output (test-results/faults.log) is printed
# once both have ended. Then the work tree is checked for files the run left
# behind (scripts/worktree-check.sh). Ends with one plain line
# "N passed, N failed" and a non-zero exit on any failure. Projects:
# vitest.config.ts, test/README.md ("Suite time": what runs side by side, and why).
# Lint (scripts/lint.sh: ESLint, the layer rules of src/, the layout of test/,
# the formatting) runs first; its four checks count in that line as four tests
# ("lint: eslint passed/FAILED", "lint: layers …", "lint: tests …" and "lint:
# format …" say which), and
# the work-tree check as one ("worktree: clean", or "worktree: FAILED" naming
# the files), so either fails the run even when every vitest test passes.
# SKIP_FAULTS=1 leaves the fault suite out (a quicker local run); SKIP_LINT=1
# leaves lint out. Arguments (`npm test -- <files or vitest options>`) go to
# the first vitest run, and a run with arguments runs neither lint nor faults.
# VITEST_MAX_WORKERS=N: test files of the first run at once (vitest.config.ts).
# Both vitest runs collect V8 line coverage of src/ (each into its own
# test-results/coverage/<run>/), and scripts/coverage-report.mjs prints the
# merged per-folder table just before the closing line (in-process code only;
# test/README.md, "Coverage"). SKIP_COVERAGE=1 leaves it out, and so does a run
# with arguments.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh test

mkdir -p test-results
rm -f test-results/vitest.json test-results/faults.json test-results/lint.json test-results/worktree.json test-results/faults.log
rm -rf test-results/coverage
# coverage RUN: the vitest options that write the coverage of one run (none when not asked for).
coverage() {
  if [ -z "${SKIP_COVERAGE:-}" ] && [ "$ARGS" -eq 0 ]; then echo "--coverage.enabled --coverage.reportsDirectory=test-results/coverage/$1"; fi
}
ARGS=$#
sh scripts/worktree-check.sh snapshot test-results/worktree.before
set +e
status=0
reports=""
faults_pid=""
covered=test-results/coverage/main
# The fault suite runs in the background, where sh ignores Ctrl-C: stop it with the run.
stop_faults() { [ -z "$faults_pid" ] || kill "$faults_pid" 2>/dev/null || true; }
trap 'stop_faults; exit 130' INT
trap 'stop_faults; exit 143' TERM
if [ -z "${SKIP_LINT:-}" ] && [ $# -eq 0 ]; then
  LINT_REPORT=test-results/lint.json sh scripts/lint.sh || status=1
  reports=test-results/lint.json
fi
if [ -z "${SKIP_FAULTS:-}" ] && [ $# -eq 0 ]; then
  # shellcheck disable=SC2046 # the options are words
  node_modules/.bin/vitest run --project faults $(coverage faults) --reporter=default --reporter=json --outputFile.json=test-results/faults.json >test-results/faults.log 2>&1 &
  faults_pid=$!
  covered="$covered test-results/coverage/faults"
fi
# shellcheck disable=SC2046 # the options are words
npx vitest run --project unit --project integration --project e2e --project types $(coverage main) \
  --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
main_rc=$?
[ $main_rc -eq 0 ] || status=1
# Each vitest report with its run's exit status: a run that failed with every test passed (an unhandled error,
# which vitest's JSON report leaves out) is counted as a failure in the closing line, not hidden behind "0 failed".
reports="$reports test-results/vitest.json@$main_rc"
if [ -n "$faults_pid" ]; then
  if kill -0 "$faults_pid" 2>/dev/null; then echo "waiting for the fault suite (its output so far: test-results/faults.log)"; fi
  wait "$faults_pid"
  faults_rc=$?
  [ $faults_rc -eq 0 ] || status=1
  echo
  echo "---- faults (test-results/faults.log) ----"
  cat test-results/faults.log
  reports="$reports test-results/faults.json@$faults_rc"
fi
echo
sh scripts/worktree-check.sh compare test-results/worktree.before test-results/worktree.json || status=1
[ ! -f test-results/worktree.json ] || reports="$reports test-results/worktree.json"
# shellcheck disable=SC2086 # a list of directories
[ -z "$(coverage main)" ] || node scripts/coverage-report.mjs $covered
set -e
node scripts/totals.mjs $reports || status=1
exit $status
