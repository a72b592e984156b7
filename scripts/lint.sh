#!/bin/sh
# `npm run lint`: ESLint (eslint.config.js: typescript-eslint's type-aware
# recommended rules over src, test, handlers, bench, scripts, bin), the layer
# rules of src/ (.dependency-cruiser.cjs) and the layout of test/
# (scripts/check-test-layout.mjs: a test's folder is the src/ folder it tests).
# Runs all three, prints one line for each ("lint: eslint passed" / "lint: eslint
# FAILED", the same for "layers" and "tests"), and exits non-zero if any failed.
# LINT_REPORT=FILE also writes the three results in the shape of a vitest JSON
# report ({"numPassedTests":N,"numFailedTests":N}), which scripts/totals.mjs
# adds to its "N passed, N failed" line (scripts/test.sh does this).
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
check() {
  name=$1
  shift
  if "$@"; then
    echo "lint: $name passed"
    passed=$((passed + 1))
  else
    echo "lint: $name FAILED"
    failed=$((failed + 1))
  fi
}
check eslint npm run --silent lint:eslint
check layers npm run --silent lint:layers
check tests npm run --silent lint:tests

if [ -n "${LINT_REPORT:-}" ]; then
  mkdir -p "$(dirname "$LINT_REPORT")"
  printf '{"numPassedTests":%d,"numFailedTests":%d}\n' "$passed" "$failed" >"$LINT_REPORT"
fi
[ "$failed" -eq 0 ]
