#!/usr/bin/env bash
# Proves scripts/boundaries.sh catches a breach: the tree as it is passes, and the same check
# fails once a file importing a database driver is planted in the event store contract, or one
# importing a driver in the data plane, or one importing the data plane in the read side's
# application layer (queries/) (through go list's -overlay, so the tree is not touched), or
# once a rule is given that a backend breaks.
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
if GOFLAGS="-overlay=$tmp/overlay.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
	fail "a driver planted in ./eventstore passed"
fi
grep -q 'modernc.org/sqlite' "$tmp/out" || fail "the breach report does not name the driver: $(cat "$tmp/out")"

cat >"$tmp/breach_gateway.go" <<'GO'
package gateway

import _ "github.com/jackc/pgx/v5"
GO
printf '{"Replace":{"%s":"%s"}}\n' "$PWD/gateway/zz_breach.go" "$tmp/breach_gateway.go" >"$tmp/overlay_gateway.json"
if GOFLAGS="-overlay=$tmp/overlay_gateway.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
	fail "a driver planted in ./gateway passed"
fi
grep -q '^  github.com/jackc/pgx/v5$' "$tmp/out" || fail "the breach report does not name pgx: $(cat "$tmp/out")"

cat >"$tmp/breach_queries.go" <<'GO'
package queries

import _ "github.com/causeway/causeway/gateway"
GO
printf '{"Replace":{"%s":"%s"}}\n' "$PWD/queries/zz_breach.go" "$tmp/breach_queries.go" >"$tmp/overlay_queries.json"
if GOFLAGS="-overlay=$tmp/overlay_queries.json" bash scripts/boundaries.sh 2>"$tmp/out"; then
	fail "the data plane planted in ./queries passed"
fi
grep -q '^  github.com/causeway/causeway/gateway$' "$tmp/out" || fail "the breach report does not name gateway: $(cat "$tmp/out")"

echo 'deps ./eventstore/postgres ^github\.com/jackc/pgx(/|$) planted: a backend holds its driver' >"$tmp/rules"
if bash scripts/boundaries.sh "$tmp/rules" 2>"$tmp/out"; then
	fail "a rule that eventstore/postgres breaks passed"
fi
grep -q 'github.com/jackc/pgx/v5' "$tmp/out" || fail "the breach report does not name pgx: $(cat "$tmp/out")"
echo "boundaries_test: ok"
