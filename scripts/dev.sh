#!/bin/sh
# Starts Switchyard on its embedded defaults: a managed local redis-server, a
# development webhook secret (printed), and - unless WORKSPACE_API_URL is set -
# the sandbox (a local stand-in for the workspace API) wired both ways:
# its events are signed and sent to the receiver, the handlers call its API.
# The receiver binds loopback (127.0.0.1) unless HOST is set.
# PORT / SANDBOX_PORT move it off 3000 / 4010; SWITCHYARD_HOME moves the local
# state (.switchyard: managed Redis, dev secret). SKIP_SETUP=1 skips the
# install-and-build step (the test suite, which has built already, sets it).
set -eu
cd "$(dirname "$0")/.."
[ "${SKIP_SETUP:-}" = "1" ] || sh scripts/setup.sh

PORT=${PORT:-3000}
HOST=${HOST:-127.0.0.1}
STATE=${SWITCHYARD_HOME:-.switchyard}
export PORT HOST
# Where the sandbox reaches the receiver: loopback when it binds every interface.
case "$HOST" in
  0.0.0.0|::) RECEIVER_HOST=127.0.0.1 ;;
  *:*) RECEIVER_HOST="[$HOST]" ;;
  *) RECEIVER_HOST=$HOST ;;
esac
if [ -z "${WEBHOOK_SECRETS:-}" ] && [ -z "${WEBHOOK_SECRETS_FILE:-}" ]; then
  mkdir -p "$STATE"
  [ -f "$STATE/dev-secret" ] || node -e "process.stdout.write('dev_'+require('crypto').randomBytes(16).toString('hex'))" > "$STATE/dev-secret"
  WEBHOOK_SECRETS=$(cat "$STATE/dev-secret")
  export WEBHOOK_SECRETS
  echo "dev: WEBHOOK_SECRETS=$WEBHOOK_SECRETS (development secret, kept in $STATE/dev-secret; send, replay and sign use it too)"
fi

if [ -z "${WORKSPACE_API_URL:-}" ]; then
  SANDBOX_PORT=${SANDBOX_PORT:-4010}
  node bin/switchyard.js sandbox --port "$SANDBOX_PORT" --token sbx_full_acme \
    --webhook-url "http://$RECEIVER_HOST:$PORT/webhooks" --secret "${WEBHOOK_SECRETS%%,*}" &
  SANDBOX_PID=$!
  trap 'kill $SANDBOX_PID 2>/dev/null || true' EXIT INT TERM
  WORKSPACE_API_URL="http://127.0.0.1:$SANDBOX_PORT/api/v1"
  WORKSPACE_API_TOKEN=${WORKSPACE_API_TOKEN:-sbx_full_acme}
  export WORKSPACE_API_URL WORKSPACE_API_TOKEN
  echo "dev: sandbox workspace API at $WORKSPACE_API_URL (token sbx_full_acme); its events go to http://$RECEIVER_HOST:$PORT/webhooks"
fi
node bin/switchyard.js start
