#!/usr/bin/env bash
# Gateway overhead, side by side, in one run (bench/peer-vs-direct.sh): the fake
# provider reached directly, a bare Go reverse proxy (the floor for any Go gateway), the peer
# gateway, and Causeway, started from its real binary with authentication, a rate-limit
# policy that every request is checked against, a budget too large ever to refuse, and
# request logging on. Causeway runs in each mode of MODES:
#   embedded  SQLite event store, read models in memory, analytics in SQLite (the defaults)
#   server    PostgreSQL event store and read models, ClickHouse analytics: a fresh database
#             of each per run on the test servers of scripts/services.sh, dropped at the end
#   cluster1  server mode, one instance behind a round-robin balancer (bench/refproxy)
#   cluster3  server mode, three instances behind the same balancer, sharing the rate limit
#             and the budget through leases: against cluster1, what several instances cost
#             (CPU per request of the whole process tree, and p99); non-streamed only
#
#   scripts/bench-gateway.sh              PIN=1, concurrency 1 and 50, then the same streamed
#   DURATION=5 scripts/bench-gateway.sh   shorter runs
#   MODES=server STREAMS=0 scripts/...    one mode, non-streamed only
#   HARNESS=bench                         where peer-vs-direct.sh lives (this repository's copy)
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-bench}
MODES=${MODES:-"embedded server cluster1 cluster3"}
STREAMS=${STREAMS:-"0 1"}
[[ -x $HARNESS/peer-vs-direct.sh ]] || { echo "bench-gateway: no harness at $HARNESS" >&2; exit 1; }
command -v wrk >/dev/null || { [[ $(id -u) == 0 ]] && apt-get install -y wrk >/dev/null; }
if [[ ${SKIP_PORTKEY:-0} != 1 && ! -d ${PORTKEY_DIR:-/tmp/peer-portkey}/node_modules ]]; then
  if ! bash "$HARNESS/setup-peer-portkey.sh" >&2; then
    echo "bench-gateway: the peer gateway could not be installed; its rows will be missing" >&2
    export SKIP_PORTKEY=1
  fi
fi

WORK=$(mktemp -d /tmp/causeway-bench.XXXXXX)
SETUP_PID=
PG_ADMIN_URL= PG_DBS=() CH_DBS=()
cleanup() {
  # Only what this script started or created: the set-up server by its PID (never kill 0,
  # which is the whole process group, make included), and the databases of the server mode.
  if [[ -n $SETUP_PID ]]; then
    kill "$SETUP_PID" 2>/dev/null || true
    wait "$SETUP_PID" 2>/dev/null || true
  fi
  local db
  for db in "${PG_DBS[@]}"; do
    # FORCE (PostgreSQL 13 and later) ends the connections a stopped gateway may have left.
    psql -q "$PG_ADMIN_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 ||
      psql -q "$PG_ADMIN_URL" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
  done
  for db in "${CH_DBS[@]}"; do ch_query "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$WORK/causeway" ./cmd/causeway
go build -o "$WORK/balancer" ./bench/refproxy
ADMIN_KEY="bench-admin-key-$(date +%s)-0000000000"
PORT=18090
MOCK_URL="http://127.0.0.1:${MOCK_PORT:-18080}/v1"
export CAUSEWAY_BOOTSTRAP_ADMIN_KEY="$ADMIN_KEY" CAUSEWAY_ALLOWED_HOSTS=127.0.0.1 CAUSEWAY_LOG_LEVEL=warn

# ch_query SQL: runs SQL on the test ClickHouse (host and native port of TEST_CLICKHOUSE_URL).
ch_query() {
  local hostport=${TEST_CLICKHOUSE_URL#*://}
  hostport=${hostport%%/*} hostport=${hostport%%\?*}
  clickhouse-client --host "${hostport%:*}" --port "${hostport##*:}" -q "$1"
}

# server_env NAME: fresh PostgreSQL and ClickHouse databases for one server-mode run; adds the
# environment Causeway needs for them to MODE_ENV.
server_env() {
  local name=$1
  if [[ -z ${TEST_DATABASE_URL:-} || -z ${TEST_CLICKHOUSE_URL:-} ]]; then
    eval "$(bash scripts/services.sh)"
  fi
  command -v psql >/dev/null || { echo "bench-gateway: the server mode needs psql" >&2; return 1; }
  command -v clickhouse-client >/dev/null || { echo "bench-gateway: the server mode needs clickhouse-client" >&2; return 1; }
  PG_ADMIN_URL=$TEST_DATABASE_URL
  psql -q "$PG_ADMIN_URL" -c "CREATE DATABASE $name" >/dev/null
  PG_DBS+=("$name")
  ch_query "CREATE DATABASE $name"
  CH_DBS+=("$name")
  # The test URL with its database replaced by the fresh one.
  local pg=$(sed -E "s#^(postgres(ql)?://[^/]+)/[^?]*#\1/$name#" <<<"$TEST_DATABASE_URL")
  local ch=$(sed -E "s#^(clickhouse://[^/?]+)(/[^?]*)?#\1/$name#" <<<"$TEST_CLICKHOUSE_URL")
  MODE_ENV+=("EVENTSTORE_URL=$pg" "DATABASE_URL=$pg" "CLICKHOUSE_URL=$ch")
}

# setup ENV...: starts Causeway once with ENV to create a workspace, a key for it, a rate-limit
# policy on it (high enough never to refuse, but checked on every request) and a cost budget
# on the workspace (likewise); sets KEY.
setup() {
  # Something already answering on the port (a Causeway left running) would take the set-up's
  # requests, and its admin key is not ours.
  if curl -fs -o /dev/null "http://127.0.0.1:$PORT/v1/health"; then
    echo "bench-gateway: something already answers on 127.0.0.1:$PORT; stop it first" >&2
    exit 1
  fi
  env "$@" CAUSEWAY_ADDR=127.0.0.1:$PORT "$WORK/causeway" serve 2>"$WORK/setup.log" &
  SETUP_PID=$!
  local ready=
  for _ in $(seq 300); do curl -fs "http://127.0.0.1:$PORT/v1/health" >/dev/null && { ready=1; break; }; sleep 0.1; done
  [[ -n $ready ]] || { cat "$WORK/setup.log" >&2; echo "bench-gateway: Causeway did not start" >&2; exit 1; }
  api() { curl -fsS -X "$1" "http://127.0.0.1:$PORT/v1$2" -H "x-gateway-api-key: $ADMIN_KEY" -H 'Content-Type: application/json' -d "$3"; }
  local ws
  ws=$(api POST /workspaces '{"name":"Bench"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
  KEY=$(api POST /api-keys/workspace/service "{\"name\":\"bench\",\"workspace_id\":\"$ws\",\"scopes\":[\"completions.write\"]}" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  api POST /policies/rate-limits "{\"workspace_id\":\"$ws\",\"type\":\"requests\",\"unit\":\"rpm\",\"value\":100000000,\"conditions\":[{\"key\":\"workspace_id\",\"value\":\"$ws\"}],\"group_by\":[{\"key\":\"api_key\"}]}" >/dev/null
  api PUT "/workspaces/$ws" '{"usage_limits":[{"type":"cost","credit_limit":1000000000}]}' >/dev/null
  kill "$SETUP_PID"
  wait "$SETUP_PID" 2>/dev/null || true
  SETUP_PID=
}

export PIN=${PIN:-1} CONCURRENCY=${CONCURRENCY:-"1 50"}
# Raw wrk output, process logs and results.tsv of every run outlive this script.
RESULTS_ROOT=${RESULTS_ROOT:-$(mktemp -d /tmp/causeway-bench-results.XXXXXX)}
SUMMARY=()
for mode in $MODES; do
  MODE_ENV=("CAUSEWAY_DATA_DIR=$WORK/data-$mode")
  case $mode in
    embedded) label=cw-embed ;;
    server) label=cw-server; server_env "causeway_bench_$(date +%s)_$$" ;;
    cluster1 | cluster3) label=cw-$mode; server_env "causeway_bench_$(date +%s)_${mode}_$$" ;;
    *) echo "bench-gateway: unknown mode $mode (embedded, server, cluster1, cluster3)" >&2; exit 1 ;;
  esac
  setup "${MODE_ENV[@]}"

  export GW_NAME=$label
  export GW_CMD="env ${MODE_ENV[*]} CAUSEWAY_ADDR=127.0.0.1:$PORT $WORK/causeway serve"
  mode_streams=$STREAMS
  if [[ $mode == cluster* ]]; then
    GW_CMD="env ${MODE_ENV[*]} bash scripts/bench-cluster.sh ${mode#cluster} $PORT $WORK/causeway $WORK/balancer $WORK/nodes-$mode"
    mode_streams=0
  fi
  export GW_URL="http://127.0.0.1:$PORT/v1/chat/completions"
  export GW_READY_URL="http://127.0.0.1:$PORT/v1/health"
  export GW_HEADERS="Authorization: Bearer sk-mock|x-gateway-api-key: $KEY|x-gateway-provider: openai|x-gateway-custom-host: $MOCK_URL"
  for stream in $mode_streams; do
    what="chat completions"
    [[ $stream == 1 ]] && what="streamed chat completions"
    echo "== $mode mode: $what" >&2
    echo "== $mode mode: $what ($(uptime | sed -E 's/.*(load average)/\1/'))"
    results=$RESULTS_ROOT/$mode-stream$stream
    RESULTS_DIR=$results STREAM=$stream bash "$HARNESS/peer-vs-direct.sh"
    SUMMARY+=("$mode $stream $results/results.tsv")
  done
done

# The goals are ratios to the bare proxy of the same run: CPU per request, requests per second
# at the highest concurrency, and the p99 each adds over the provider reached directly at the
# lowest; peak RSS is the gateway's own.
echo
echo "== Causeway against the bare proxy of the same run"
printf '%-9s %-6s %9s %9s %8s %9s %9s %9s %9s %9s\n' mode stream RPS_ratio CPU_ratio cw_us proxy_us \
  +p50_cw +p99_cw +p99_proxy RSS_peak
for s in "${SUMMARY[@]}"; do
  read -r mode stream tsv <<<"$s"
  awk -v mode="$mode" -v stream="$stream" -F'\t' '
    NR == 1 { next }
    { rps[$1, $2] = $3; p50[$1, $2] = $4; p99[$1, $2] = $6; peak[$1] = $10; cpu[$1, $2] = $12
      if (!($2 in seen)) { seen[$2] = 1; concs[++n] = $2 }
      if ($1 != "direct" && $1 != "refproxy" && $1 != "portkey") cw = $1 }
    END {
      lo = concs[1]; hi = concs[n]
      for (i = 1; i <= n; i++) { if (concs[i] + 0 < lo + 0) lo = concs[i]; if (concs[i] + 0 > hi + 0) hi = concs[i] }
      if (cw == "" || !(("refproxy", hi) in rps)) { print mode ": no Causeway or proxy row"; exit }
      printf "%-9s %-6s %8.2fx %8.2fx %8.0f %9.0f %+9.2f %+9.2f %+9.2f %6.0fMiB\n", mode, stream ? "yes" : "no",
        rps[cw, hi] / rps["refproxy", hi], cpu[cw, hi] / cpu["refproxy", hi], cpu[cw, hi], cpu["refproxy", hi],
        p50[cw, lo] - p50["direct", lo], p99[cw, lo] - p99["direct", lo], p99["refproxy", lo] - p99["direct", lo], peak[cw]
    }' "$tsv"
done
echo "(RPS and CPU per request at the highest concurrency; +p50/+p99 in ms over direct at the lowest)"

# Three instances against one, both behind the same balancer: what sharing the limits through
# leases costs, as CPU per request of the whole tree and the p99 added at the lowest concurrency.
one= three=
for s in "${SUMMARY[@]}"; do
  read -r mode stream tsv <<<"$s"
  [[ $mode == cluster1 ]] && one=$tsv
  [[ $mode == cluster3 ]] && three=$tsv
done
if [[ -n $one && -n $three ]]; then
  echo
  echo "== three instances against one (the balancer in front of both)"
  awk -F'\t' '
    FNR == 1 { file++; next }
    $1 ~ /^cw-cluster/ { cpu[file, $2] = $12; p99[file, $2] = $6; rps[file, $2] = $3; concs[$2] = 1 }
    $1 == "direct" { d99[file, $2] = $6 }
    END {
      for (c in concs) { if (lo == "" || c + 0 < lo + 0) lo = c; if (hi == "" || c + 0 > hi + 0) hi = c }
      printf "CPU per request at c=%s: %.0f us against %.0f us (%.2fx); RPS %.0f against %.0f (%.2fx)\n", hi,
        cpu[2, hi], cpu[1, hi], cpu[2, hi] / cpu[1, hi], rps[2, hi], rps[1, hi], rps[2, hi] / rps[1, hi]
      printf "p99 added at c=%s: %+.2f ms against %+.2f ms\n", lo, p99[2, lo] - d99[2, lo], p99[1, lo] - d99[1, lo]
    }' "$one" "$three"
fi
echo "raw output of every run: $RESULTS_ROOT"
