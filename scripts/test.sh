#!/bin/sh
# The whole test suite: set-up, then vitest (unit, integration on a real
# redis-server, end-to-end over HTTP). Ends with one plain line
# "N passed, N failed" and a non-zero exit on any failure.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh

mkdir -p test-results
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
status=$?
set -e
node scripts/totals.mjs test-results/vitest.json || status=1
exit $status
