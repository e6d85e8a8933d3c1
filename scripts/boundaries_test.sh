#!/usr/bin/env bash
# Proves scripts/boundaries.sh catches a breach: the tree as it is passes, and the same check
# fails once a file importing a database driver is planted in the event store contract, or one
# importing a driver, a provider adapter family or the OpenTelemetry SDK, in the data plane, or once each rule on
# commands/, queries/, analytics/, workers/, cache/semantic, guardrails/, cli/, metrics/ and console/ is broken by a planted import
# (through go list's -overlay, so the tree is not touched), or once a rule is given that a
# backend breaks.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "boundaries_test: $*" >&2; exit 1; }

bash scripts/boundaries.sh || fail "the tree as it is should pass"

cat >"$tmp/breach.go" <<'GO'
package eventstore

import _ "modernc.org/sqlite"
GO
printf '{"Replace":{"%s":"%s"}}\n' "$PWD/eventstore/zz_breach.go" "$tmp/breach.go" >"$tmp/overlay.json"
if ONLY=./eventstore GOFLAGS="-overlay=$tmp/overlay.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
	fail "a driver planted in ./eventstore passed"
fi
grep -q 'modernc.org/sqlite' "$tmp/out" || fail "the breach report does not name the driver: $(cat "$tmp/out")"

cat >"$tmp/breach_gateway.go" <<'GO'
package gateway

import _ "github.com/jackc/pgx/v5"
GO
printf '{"Replace":{"%s":"%s"}}\n' "$PWD/gateway/zz_breach.go" "$tmp/breach_gateway.go" >"$tmp/overlay_gateway.json"
if ONLY=./gateway/... GOFLAGS="-overlay=$tmp/overlay_gateway.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
	fail "a driver planted in ./gateway passed"
fi
grep -q '^  github.com/jackc/pgx/v5$' "$tmp/out" || fail "the breach report does not name pgx: $(cat "$tmp/out")"

# plant DIR PACKAGE IMPORT RULE: a file of PACKAGE in DIR importing IMPORT must fail the rule
# on RULE (a rule's packages, as the table spells them), and the report must name IMPORT.
plant() {
	local dir=$1 pkg=$2 imp=$3 rule=$4 name
	name=$(printf '%s' "$dir" | tr '/' '_')
	printf 'package %s\n\nimport _ "%s"\n' "$pkg" "$imp" >"$tmp/breach_$name.go"
	printf '{"Replace":{"%s":"%s"}}\n' "$PWD/$dir/zz_breach.go" "$tmp/breach_$name.go" >"$tmp/overlay_$name.json"
	if ONLY="$rule" GOFLAGS="-overlay=$tmp/overlay_$name.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
		fail "$imp planted in ./$dir passed"
	fi
	grep -qF "boundaries: $rule breaks a rule" "$tmp/out" || fail "the rule on $rule did not catch $imp in ./$dir: $(cat "$tmp/out")"
	grep -qx "  $imp" "$tmp/out" || fail "the breach report does not name $imp: $(cat "$tmp/out")"
}

# The write side links no request logs (nor, through them, a driver), and the request-log wing
# no commands: neither imports the other.
plant commands commands github.com/causeway/causeway/analytics ./commands/...
plant commands commands github.com/ClickHouse/clickhouse-go/v2 ./commands/...
plant analytics analytics github.com/causeway/causeway/commands ./analytics/...
plant analytics/sqlite sqlite github.com/causeway/causeway/gateway ./analytics/...
# The record the gateway imports, and the SQL the stores share, link no driver.
plant analytics analytics modernc.org/sqlite ./analytics
plant analytics/internal/sqlstore sqlstore github.com/ClickHouse/clickhouse-go/v2 ./analytics/internal/sqlstore
plant workers workers github.com/causeway/causeway/projections ./workers/...
# The data plane reaches providers through their contract: the families are cmd's to wire.
plant gateway gateway github.com/causeway/causeway/gateway/providers/all ./gateway
plant ledger ledger github.com/jackc/pgx/v5 ./ledger
plant cluster cluster github.com/jackc/pgx/v5 ./cluster
plant cache cache github.com/redis/go-redis/v9 ./cache
plant gateway gateway github.com/redis/go-redis/v9 ./gateway/...
# The data plane traces through the OpenTelemetry API: the SDK and its exporters are cmd's.
plant gateway gateway go.opentelemetry.io/otel/sdk/trace ./gateway/...
plant gateway/sse sse go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp ./gateway/...
# The read side's application layer links no data plane, HTTP layer, commands or driver.
plant queries queries github.com/causeway/causeway/gateway ./queries/...
plant queries queries github.com/jackc/pgx/v5 ./queries/...
# The semantic index stands alone: the cache feeds it.
plant cache/semantic semantic github.com/causeway/causeway/analytics ./cache/semantic
# The guardrail engine links no wing that calls it (planted imports that cannot cycle back).
plant guardrails guardrails github.com/causeway/causeway/analytics ./guardrails
plant guardrails guardrails github.com/jackc/pgx/v5 ./guardrails
# The admin CLI speaks HTTP to the admin API: nothing of Causeway's own, no driver.
plant cli cli github.com/causeway/causeway/commands ./cli/...
plant cli cli github.com/causeway/causeway/analytics/sqlite ./cli/...
plant cli cli modernc.org/sqlite ./cli/...
# The metrics read the request-log record and their own small interfaces only.
plant metrics metrics github.com/causeway/causeway/projections ./metrics
plant metrics metrics github.com/jackc/pgx/v5 ./metrics
# The web console is files: the browser reaches the product through the API.
plant console console github.com/causeway/causeway/domain ./console

echo 'deps ./eventstore/postgres ^github\.com/jackc/pgx(/|$) planted: a backend holds its driver' >"$tmp/rules"
if bash scripts/boundaries.sh "$tmp/rules" 2>"$tmp/out"; then
	fail "a rule that eventstore/postgres breaks passed"
fi
grep -q 'github.com/jackc/pgx/v5' "$tmp/out" || fail "the breach report does not name pgx: $(cat "$tmp/out")"
echo "boundaries_test: ok"
