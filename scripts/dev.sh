#!/bin/sh
# Starts Switchyard on its embedded defaults: a managed local redis-server,
# a development webhook secret (printed), receiver + worker in one process.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup.sh

if [ -z "${WEBHOOK_SECRETS:-}" ] && [ -z "${WEBHOOK_SECRETS_FILE:-}" ]; then
  mkdir -p .switchyard
  [ -f .switchyard/dev-secret ] || node -e "process.stdout.write('dev_'+require('crypto').randomBytes(16).toString('hex'))" > .switchyard/dev-secret
  WEBHOOK_SECRETS=$(cat .switchyard/dev-secret)
  export WEBHOOK_SECRETS
  echo "dev: WEBHOOK_SECRETS=$WEBHOOK_SECRETS (development secret, kept in .switchyard/dev-secret)"
fi
exec node bin/switchyard.js start
