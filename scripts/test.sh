#!/bin/sh
# The whole test suite: set-up, then vitest (unit, integration on a real
# redis-server, end-to-end over HTTP, browser) and the fault suite
# (test/faults: Redis kills, worker SIGKILLs, storms). Ends with one plain line
# "N passed, N failed" and a non-zero exit on any failure.
# SKIP_FAULTS=1 leaves the fault suite out (a quicker local run).
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh

mkdir -p test-results
rm -f test-results/vitest.json test-results/faults.json
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
status=$?
reports=test-results/vitest.json
if [ -z "${SKIP_FAULTS:-}" ] && [ $# -eq 0 ]; then
  npx vitest run --config test/faults/vitest.config.ts --reporter=default --reporter=json --outputFile.json=test-results/faults.json
  [ $? -eq 0 ] || status=1
  reports="$reports test-results/faults.json"
fi
set -e
node scripts/totals.mjs $reports || status=1
exit $status
