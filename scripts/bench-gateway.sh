#!/usr/bin/env bash
# Gateway overhead, side by side, in one run (../shared/bench/peer-vs-direct.sh): the fake
# provider reached directly, a bare Go reverse proxy (the floor for any Go gateway), the peer
# gateway, and Causeway, started from its real binary with authentication, a rate-limit
# policy that every request is checked against, and request logging on.
#
#   scripts/bench-gateway.sh            PIN=1, concurrency 1 and 50, then the same streamed
#   DURATION=5 scripts/bench-gateway.sh shorter runs
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-../shared/bench}
[[ -x $HARNESS/peer-vs-direct.sh ]] || { echo "bench-gateway: no harness at $HARNESS" >&2; exit 1; }
command -v wrk >/dev/null || { [[ $(id -u) == 0 ]] && apt-get install -y wrk >/dev/null; }
if [[ ! -d ${PORTKEY_DIR:-/tmp/peer-portkey}/node_modules ]]; then
  bash "$HARNESS/setup-peer-portkey.sh" >&2 || echo "bench-gateway: the peer gateway could not be installed; its rows will be missing" >&2
fi

WORK=$(mktemp -d /tmp/causeway-bench.XXXXXX)
trap 'kill ${SETUP_PID:-0} 2>/dev/null || true; rm -rf "$WORK"' EXIT
go build -o "$WORK/causeway" ./cmd/causeway
ADMIN_KEY="bench-admin-key-$(date +%s)-0000000000"
PORT=18090
MOCK_URL="http://127.0.0.1:${MOCK_PORT:-18080}/v1"
export CAUSEWAY_DATA_DIR="$WORK/data" CAUSEWAY_BOOTSTRAP_ADMIN_KEY="$ADMIN_KEY" CAUSEWAY_ALLOWED_HOSTS=127.0.0.1 CAUSEWAY_LOG_LEVEL=warn

# Set up: a workspace, a key for it, and a rate-limit policy on it (high enough never to
# refuse in the benchmark, but checked on every request).
CAUSEWAY_ADDR=127.0.0.1:$PORT "$WORK/causeway" serve 2>"$WORK/setup.log" &
SETUP_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/v1/health" >/dev/null && break; sleep 0.1; done
api() { curl -fsS -X POST "http://127.0.0.1:$PORT/v1$1" -H "x-gateway-api-key: $ADMIN_KEY" -H 'Content-Type: application/json' -d "$2"; }
WS=$(api /workspaces '{"name":"Bench"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
KEY=$(api /api-keys/workspace/service "{\"name\":\"bench\",\"workspace_id\":\"$WS\",\"scopes\":[\"completions.write\"]}" | sed -E 's/.*"key":"([^"]+)".*/\1/')
api /policies/rate-limits "{\"workspace_id\":\"$WS\",\"type\":\"requests\",\"unit\":\"rpm\",\"value\":100000000,\"conditions\":[{\"key\":\"workspace_id\",\"value\":\"$WS\"}],\"group_by\":[{\"key\":\"api_key\"}]}" >/dev/null
kill "$SETUP_PID"; wait "$SETUP_PID" 2>/dev/null || true; SETUP_PID=

export GW_NAME=causeway
export GW_CMD="env CAUSEWAY_ADDR=127.0.0.1:$PORT $WORK/causeway serve"
export GW_URL="http://127.0.0.1:$PORT/v1/chat/completions"
export GW_READY_URL="http://127.0.0.1:$PORT/v1/health"
export GW_HEADERS="Authorization: Bearer sk-mock|x-gateway-api-key: $KEY|x-gateway-provider: openai|x-gateway-custom-host: $MOCK_URL"
export PIN=${PIN:-1} CONCURRENCY=${CONCURRENCY:-"1 50"}
echo "== chat completions" >&2
bash "$HARNESS/peer-vs-direct.sh"
echo "== streamed chat completions" >&2
STREAM=1 bash "$HARNESS/peer-vs-direct.sh"
