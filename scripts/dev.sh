#!/bin/sh
# `npm run dev` in this repository: set-up (redis-server when missing, npm ci
# when needed, a build only when src/ changed since the last one), then
# `switchyard dev`, which runs everything in one process: a managed local
# redis-server, a development webhook secret (printed, kept in
# $SWITCHYARD_HOME/dev-secret), the receiver and worker, and - unless
# WORKSPACE_API_URL is set - the sandbox (a local stand-in for the workspace
# API) wired both ways. Saving a handler module reloads it; Ctrl-C stops it all.
# The receiver binds loopback (127.0.0.1) unless HOST is set. Arguments go to
# `switchyard dev` (`npm run dev -- --keep-sandbox` keeps the sandbox across restarts).
# PORT / SANDBOX_PORT move it off 3000 / 4010; SWITCHYARD_HOME moves the local
# state (.switchyard: managed Redis, dev secret). SKIP_SETUP=1 skips the
# set-up step (the test suite, which has built already, sets it).
set -eu
cd "$(dirname "$0")/.."
[ "${SKIP_SETUP:-}" = "1" ] || sh scripts/setup.sh
exec node bin/switchyard.js dev "$@"
