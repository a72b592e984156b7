#!/bin/sh
# `npm run lint`: ESLint (eslint.config.js: typescript-eslint's type-aware
# recommended rules over src, test, handlers, bench, scripts, bin), the layer
# rules of src/ (.dependency-cruiser.cjs), the layout of test/
# (scripts/check-test-layout.mjs: a test's folder is the src/ folder it tests)
# and the formatting (Prettier: .prettierrc.json, .prettierignore).
# Runs all four, prints one line for each ("lint: eslint passed" / "lint: eslint
# FAILED", the same for "layers", "tests" and "format"), and exits non-zero if
# any failed; a format failure names the files and the command that fixes them.
# LINT_REPORT=FILE also writes the four results in the shape of a vitest JSON
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
format_check() {
  if npm run --silent format:check; then
    return 0
  fi
  echo "lint: the files named above are not formatted as Prettier formats them; \`npm run format\` rewrites them" >&2
  return 1
}
check format format_check

if [ -n "${LINT_REPORT:-}" ]; then
  mkdir -p "$(dirname "$LINT_REPORT")"
  printf '{"numPassedTests":%d,"numFailedTests":%d}\n' "$passed" "$failed" >"$LINT_REPORT"
fi
[ "$failed" -eq 0 ]
