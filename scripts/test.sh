#!/bin/sh
# The whole test suite: set-up, lint, then the vitest projects unit,
# integration (a real redis-server), e2e (the built CLI, child processes, the
# packed tarball, a browser) and types, then the faults project on its own
# (test/faults: Redis kills, worker SIGKILLs, storms). Ends with one plain line
# "N passed, N failed" and a non-zero exit on any failure. Projects:
# vitest.config.ts, test/README.md.
# Lint (scripts/lint.sh: ESLint, the layer rules of src/, the layout of test/)
# runs first; its three checks count in that line as three tests ("lint: eslint
# passed/FAILED", "lint: layers …" and "lint: tests …" say which), so a lint failure fails the run
# even when every vitest test passes.
# SKIP_FAULTS=1 leaves the fault suite out (a quicker local run); SKIP_LINT=1
# leaves lint out. Arguments (`npm test -- <files or vitest options>`) go to
# the first vitest run, and a run with arguments runs neither lint nor faults.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh test

mkdir -p test-results
rm -f test-results/vitest.json test-results/faults.json test-results/lint.json
set +e
status=0
reports=""
if [ -z "${SKIP_LINT:-}" ] && [ $# -eq 0 ]; then
  LINT_REPORT=test-results/lint.json sh scripts/lint.sh || status=1
  reports=test-results/lint.json
fi
npx vitest run --project unit --project integration --project e2e --project types \
  --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
[ $? -eq 0 ] || status=1
reports="$reports test-results/vitest.json"
if [ -z "${SKIP_FAULTS:-}" ] && [ $# -eq 0 ]; then
  npx vitest run --project faults --reporter=default --reporter=json --outputFile.json=test-results/faults.json
  [ $? -eq 0 ] || status=1
  reports="$reports test-results/faults.json"
fi
set -e
node scripts/totals.mjs $reports || status=1
exit $status
