#!/bin/sh
# Shared set-up for the README commands: redis-server when missing (and with
# `test`, what the suite drives: chromium, docker-compose, openssl), npm ci
# when node_modules is absent or older than the lock file, then a build when
# anything it reads changed since the last successful one (dist/.build-stamp;
# `find -newer`, no tsc when nothing did).
set -eu
cd "$(dirname "$0")/.."

# install CMD PACKAGE WHY: the Debian package when CMD is missing (root, or sudo), else say how and fail.
install() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "setup: $1 not found; installing it (Debian package $2, $3)" >&2
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "setup: cannot install $1 (not root, no sudo). Install it: apt-get install -y $2" >&2
    exit 1
  fi
}

# Debian starts a system service on install; Switchyard manages its own, so it is not needed.
install redis-server redis-server "Switchyard's managed local Redis"
if [ "${1:-}" = "test" ]; then
  # What the test suite drives besides Node: a browser, compose's config check, TLS certificates.
  # SKIP_BROWSER=1 / SKIP_COMPOSE=1 / SKIP_OPENSSL=1 skip those tests instead (counted in the closing line).
  [ "${SKIP_BROWSER:-}" = "1" ] || [ -x /usr/bin/chromium ] || install chromium chromium "the browser tests; SKIP_BROWSER=1 skips them"
  [ "${SKIP_COMPOSE:-}" = "1" ] || install docker-compose docker-compose "the compose file's check; SKIP_COMPOSE=1 skips it"
  [ "${SKIP_OPENSSL:-}" = "1" ] || install openssl openssl "the Redis TLS test; SKIP_OPENSSL=1 skips it"
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
