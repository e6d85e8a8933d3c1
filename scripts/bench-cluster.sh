#!/usr/bin/env bash
# bench-cluster.sh N PORT BIN BALANCER DIR: N Causeway instances (BIN serve, on ports PORT+101
# to PORT+100+N, clear of the harness's own ports, data directories DIR/node-I) sharing the server-mode databases of the
# environment, behind the round-robin BALANCER (bench/refproxy) on PORT. The gateway benchmark
# (scripts/bench-gateway.sh, modes cluster1 and cluster3) runs it as one gateway: the harness
# measures the whole process tree, and a TERM stops every process of it.
set -euo pipefail
n=$1 port=$2 bin=$3 balancer=$4 dir=$5
pids=()
stop() {
  trap - TERM INT EXIT
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop TERM INT EXIT
upstreams=()
for i in $(seq 1 "$n"); do
  CAUSEWAY_ADDR=127.0.0.1:$((port + 100 + i)) CAUSEWAY_DATA_DIR=$dir/node-$i "$bin" serve &
  pids+=($!)
  upstreams+=("http://127.0.0.1:$((port + 100 + i))")
done
for u in "${upstreams[@]}"; do
  for _ in $(seq 300); do curl -fs -o /dev/null "$u/v1/health" && break; sleep 0.1; done
  curl -fs -o /dev/null "$u/v1/health" || { echo "bench-cluster: $u did not start" >&2; exit 1; }
done
"$balancer" -port "$port" -upstream "$(IFS=,; echo "${upstreams[*]}")" &
pids+=($!)
wait -n
