#!/bin/sh
# The whole test suite: set-up, then three runs side by side: lint, the vitest
# projects unit, integration (a real redis-server), e2e (the built CLI, child
# processes, the packed tarball, a browser) and types, and the faults project
# (test/faults: Redis kills, worker SIGKILLs, storms; one file at a time, in a
# vitest process of its own). Most tests wait on processes, timers and Redis
# rather than burn CPU, so the three share the machine's cores well; the
# first vitest run prints as it goes, lint's and the fault suite's output
# (test-results/lint.log, test-results/faults.log) are printed once each ends.
# Then the work tree is checked for files the run left behind
# (scripts/worktree-check.sh). Ends with one plain line "N passed, N failed"
# and a non-zero exit on any failure. Projects: vitest.config.ts,
# test/README.md ("Suite time" says what runs in parallel and why).
# Lint (scripts/lint.sh: ESLint, the layer rules of src/, the layout of test/)
# counts in that line as three tests ("lint: eslint passed/FAILED", "lint:
# layers …" and "lint: tests …" say which), and the work-tree check as one
# ("worktree: clean" / "worktree: FAILED" naming the files), so either fails
# the run even when every vitest test passes.
# SKIP_FAULTS=1 leaves the fault suite out (a quicker local run); SKIP_LINT=1
# leaves lint out. Arguments (`npm test -- <files or vitest options>`) go to
# the first vitest run, and a run with arguments runs neither lint nor faults.
# VITEST_MAX_WORKERS=N sets how many test files of the first run run at once
# (vitest.config.ts: 4 by default).
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh test

mkdir -p test-results
rm -f test-results/vitest.json test-results/faults.json test-results/lint.json test-results/worktree.json test-results/lint.log test-results/faults.log
sh scripts/worktree-check.sh snapshot test-results/worktree.before
set +e
status=0
reports=""
lint_pid=""
faults_pid=""
if [ -z "${SKIP_LINT:-}" ] && [ $# -eq 0 ]; then
  LINT_REPORT=test-results/lint.json sh scripts/lint.sh >test-results/lint.log 2>&1 &
  lint_pid=$!
  reports=test-results/lint.json
fi
if [ -z "${SKIP_FAULTS:-}" ] && [ $# -eq 0 ]; then
  npx vitest run --project faults --reporter=default --reporter=json --outputFile.json=test-results/faults.json >test-results/faults.log 2>&1 &
  faults_pid=$!
fi
npx vitest run --project unit --project integration --project e2e --project types \
  --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
[ $? -eq 0 ] || status=1
reports="$reports test-results/vitest.json"
if [ -n "$lint_pid" ]; then
  wait "$lint_pid" || status=1
  echo
  echo "---- lint (test-results/lint.log) ----"
  cat test-results/lint.log
fi
if [ -n "$faults_pid" ]; then
  if kill -0 "$faults_pid" 2>/dev/null; then echo "waiting for the fault suite (its output so far: test-results/faults.log)"; fi
  wait "$faults_pid" || status=1
  echo
  echo "---- faults (test-results/faults.log) ----"
  cat test-results/faults.log
  reports="$reports test-results/faults.json"
fi
echo
sh scripts/worktree-check.sh compare test-results/worktree.before test-results/worktree.json || status=1
[ ! -f test-results/worktree.json ] || reports="$reports test-results/worktree.json"
set -e
node scripts/totals.mjs $reports || status=1
exit $status
