#!/bin/sh
# `npm run build` (and `prepack`, so `npm pack`, `npm publish` and a git-URL install build): the Lua assets and tsc
# into dist/, then dist/.build-stamp, whose time is the build's start:
# scripts/setup.sh skips the build while nothing it reads is newer.
set -eu
cd "$(dirname "$0")/.."
mkdir -p dist
touch dist/.build-stamp.next
node scripts/copy-assets.mjs
tsc -p tsconfig.build.json
mv dist/.build-stamp.next dist/.build-stamp
