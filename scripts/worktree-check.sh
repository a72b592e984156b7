#!/bin/sh
# Files a test run leaves in the work tree. `worktree-check.sh snapshot FILE`
# writes the work tree's state (git status: changed and new files, ignored ones
# too, one line each) before the run; `worktree-check.sh compare FILE REPORT`
# lists what is there after the run and was not before, prints
# "worktree: clean" or "worktree: FAILED, the run left: <files>", and writes
# REPORT in the shape of a vitest JSON report (one check), which
# scripts/totals.mjs counts in its closing line. Allowed: what the run writes
# by design, dist/ (the build), test-results/ (the reports, screenshots) and
# node_modules/ (vitest's cache). Anything else a test writes belongs in a
# temporary directory it removes. A file you change yourself during the run
# counts too (the check cannot tell who wrote it); run again.
# Not a git checkout: says so and counts nothing.
set -eu
cd "$(dirname "$0")/.."

state() {
  git status --porcelain=v1 --ignored=traditional --untracked-files=all 2>/dev/null |
    grep -v -E '^.. "?(dist|test-results|node_modules)/' | LC_ALL=C sort || true
}

case "${1:-}" in
  snapshot)
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then state >"$2"; else rm -f "$2"; fi
    ;;
  compare)
    if [ ! -f "$2" ]; then
      echo "worktree: not a git checkout; files left by the run were not checked"
      rm -f "$3"
      exit 0
    fi
    left=$(state | LC_ALL=C comm -13 "$2" - | cut -c4- | LC_ALL=C sort -u)
    if [ -z "$left" ]; then
      echo "worktree: clean (the run left no files in the work tree)"
      printf '{"numPassedTests":1,"numFailedTests":0}\n' >"$3"
    else
      echo "worktree: FAILED, the run left files in the work tree (a test must write under a temporary directory and remove it):"
      echo "$left" | sed 's/^/  /'
      printf '{"numPassedTests":0,"numFailedTests":1}\n' >"$3"
      exit 1
    fi
    ;;
  *)
    echo "usage: worktree-check.sh snapshot FILE | compare FILE REPORT" >&2
    exit 2
    ;;
esac
