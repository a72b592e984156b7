#!/bin/sh
# Shared set-up for the README commands: redis-server when missing, npm ci
# when node_modules is absent or older than the lock file, then a build when
# anything it reads changed since the last successful one (dist/.build-stamp;
# `find -newer`, no tsc when nothing did).
set -eu
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "setup: redis-server not found; installing it (Debian package redis-server)" >&2
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "setup: cannot install redis-server (not root, no sudo). Install it: apt-get install -y redis-server" >&2
    exit 1
  fi
  # Debian starts a system service on install; Switchyard manages its own, so it is not needed.
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

STAMP=dist/.build-stamp
INPUTS="src package.json package-lock.json tsconfig.json tsconfig.build.json scripts/build.sh scripts/copy-assets.mjs"
# shellcheck disable=SC2086 # INPUTS is a list of paths
# A missing input (find fails) counts as a change: build rather than trust the stamp.
if [ -f "$STAMP" ] && newer=$(find $INPUTS -newer "$STAMP" -print 2>/dev/null) && [ -z "$newer" ]; then
  echo "setup: dist/ is up to date (nothing changed since the last build); skipping the build" >&2
else
  echo "setup: building dist/ (src/ or the build configuration changed since the last build)" >&2
  npm run --silent build # writes the stamp (scripts/build.sh)
fi
