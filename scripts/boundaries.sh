#!/usr/bin/env bash
# Import boundaries, checked by `make lint`. Each rule names packages and an extended regular
# expression their imports must not match; the script lists every breach and fails if any.
#
# usage: scripts/boundaries.sh [RULES_FILE]   (default: the table below)
#
# A rule is one line of four fields separated by spaces (the last, WHY, takes the rest):
#   MODE     deps     every package the named packages depend on, however indirectly
#            imports  only what the named packages import themselves
#   PACKAGES a go list pattern (./eventstore is that package alone, ./eventstore/... all under it)
#   PATTERN  an ERE matched against each import path
#   WHY      what the rule protects, printed with a breach
# GOFLAGS reaches go list, so a test can plant a breach with -overlay.
set -euo pipefail
cd "$(dirname "$0")/.."

# The provider adapter families, their shared translating core and the default set that names them all.
adapters='^github\.com/causeway/causeway/gateway/providers/(all|openaicompat|anthropic|gemini|cohere|translate)(/|$)'
drivers='^(modernc\.org/sqlite|github\.com/jackc/pgx|github\.com/EventStore/EventStore-Client-Go|github\.com/ClickHouse|github\.com/redis/go-redis)(/|$)'

read -r -d '' RULES <<TABLE || true
imports ./domain/...  \.          domain/ imports only the standard library
deps    ./eventstore ${drivers} the event store contract imports no database driver
deps    ./gateway/... ^github\.com/causeway/causeway/(http|commands|projections)(/|$)|${drivers} the data plane reads only its declared interfaces: no HTTP layer, no commands, no projections, no database driver
deps    ./gateway ${adapters} the data plane calls providers through their contract (gateway/providers); only cmd wires the adapter families
deps    ./gateway/... ^go\.opentelemetry\.io/(otel/sdk|otel/exporters|proto/otlp)(/|$) the data plane traces through the OpenTelemetry API only: cmd wires the SDK and its exporters
deps    ./commands/... ^github\.com/causeway/causeway/(gateway|analytics|http)(/|$)|^github\.com/ThreeDotsLabs/watermill-sql(/|$)|${drivers} the write side decides on events alone: no data plane (nor its provider adapters), no request logs, no HTTP layer, no database driver
deps    ./analytics/... ^github\.com/causeway/causeway/(gateway|commands|projections|http)(/|$) the request-log wing stands alone: the gateway publishes to it and http queries it, never the other way; no commands, no projections
deps    ./analytics ${drivers} the log record and sink the gateway imports link no database driver: the stores are subpackages
deps    ./analytics/internal/sqlstore ${drivers} the SQL the stores share links no driver: each store brings its own
deps    ./ledger ${drivers} the usage ledger's contract (and its accounting) links no database driver: the stores are subpackages
deps    ./cluster ${drivers} the cluster contract links no database driver: the registry is cluster/postgres
imports ./cache \.          the answer cache's contract imports only the standard library: the stores are subpackages
deps    ./workers/... ^github\.com/causeway/causeway/(gateway|projections|http)(/|$)|${drivers} the workers read a wing through its interfaces and act through commands: no data plane, no projections, no HTTP layer, no database driver
deps    ./queries/... ^github\.com/causeway/causeway/(gateway|analytics|http|commands)(/|$)|${drivers} the read side's application layer reads the read models and the event store contract only: no data plane, no request-log wing, no HTTP layer, no commands, no database driver
imports ./cache/semantic ^github\.com/causeway/causeway(/|$) the semantic index imports nothing of Causeway: whoever follows the cache's change feed calls Add and Remove
deps    ./metrics ^github\.com/causeway/causeway/(http|commands|gateway|projections|queries)(/|$)|${drivers} the metrics run on the request path and read records and small interfaces: no HTTP layer, no commands, no data plane, no projections, no database driver
imports ./console \.          the web console is embedded files and the standard library: the browser reaches the product through the admin API only
deps    ./templates ^github\.com/causeway/causeway/(gateway|http|commands|projections|queries|analytics|guardrails|eventstore)(/|$)|${drivers} the prompt renderer only renders: the gateway and the control plane call it, never the other way; no database driver
deps    ./guardrails ^github\.com/causeway/causeway/(gateway|http|commands|domain|projections|queries|analytics)(/|$)|${drivers} the guardrail engine only decides: the gateway calls it and the control plane validates through it, never the other way; no database driver
imports ./cli/... ^github\.com/causeway/causeway(/|$) the admin CLI talks to Causeway over HTTP only: it imports none of Causeway's packages (no commands, queries, projections, gateway, analytics, http)
deps    ./cli/... ${drivers} the admin CLI links no database driver
TABLE

if [ $# -gt 0 ]; then
	RULES=$(cat "$1")
fi

GO=${GO:-go}
failed=0
while read -r mode pkgs pattern why; do
	case "$mode" in '' | '#'*) continue ;; esac
	# ONLY=<packages> checks only the rules on those packages (as the table spells them): the
	# planted breaches of boundaries_test.sh each need one rule, not the whole table.
	if [ -n "${ONLY:-}" ] && [ "$pkgs" != "$ONLY" ]; then continue; fi
	case "$mode" in
	deps) list=$($GO list -deps "$pkgs") ;;
	imports) list=$($GO list -f '{{join .Imports "\n"}}' "$pkgs") ;;
	*) echo "boundaries: unknown mode $mode in rule: $mode $pkgs $pattern $why" >&2; exit 2 ;;
	esac
	rc=0
	bad=$(printf '%s\n' "$list" | grep -E -- "$pattern") || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "boundaries: pattern $pattern of the rule on $pkgs does not work" >&2
		exit 2
	fi
	if [ -n "$bad" ]; then
		echo "boundaries: $pkgs breaks a rule ($why), through:" >&2
		printf '%s\n' "$bad" | sort -u | sed 's/^/  /' >&2
		failed=1
	fi
done <<<"$RULES"
exit $failed
