#!/bin/sh
# The whole test suite: set-up, then the vitest projects unit, integration (a
# real redis-server), e2e (the built CLI, child processes, the packed tarball,
# a browser) and types, then the faults project on its own (test/faults: Redis
# kills, worker SIGKILLs, storms). Ends with one plain line "N passed, N failed"
# and a non-zero exit on any failure. Projects: vitest.config.ts, test/README.md.
# SKIP_FAULTS=1 leaves the fault suite out (a quicker local run); arguments
# (`npm test -- <files or vitest options>`) go to the first run and skip it too.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh

mkdir -p test-results
rm -f test-results/vitest.json test-results/faults.json
set +e
npx vitest run --project unit --project integration --project e2e --project types \
  --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
status=$?
reports=test-results/vitest.json
if [ -z "${SKIP_FAULTS:-}" ] && [ $# -eq 0 ]; then
  npx vitest run --project faults --reporter=default --reporter=json --outputFile.json=test-results/faults.json
  [ $? -eq 0 ] || status=1
  reports="$reports test-results/faults.json"
fi
set -e
node scripts/totals.mjs $reports || status=1
exit $status
