# Causeway. `make run` needs nothing installed; `make test` starts its own PostgreSQL,
# ClickHouse and Redis (installing them with apt-get when run as root on Debian) unless
# TEST_DATABASE_URL, TEST_CLICKHOUSE_URL and TEST_REDIS_URL name servers already.

GO        ?= go
TESTFLAGS ?=
BENCHTIME ?= 2s
SERVICES  := bash scripts/services.sh

.PHONY: run build test test-cluster bench lint services stop-services clean

run: ## the whole product on its embedded defaults, on :8787 under /v1
	$(GO) run ./cmd/causeway serve

build:
	$(GO) build -o bin/causeway ./cmd/causeway

test: ## the whole suite with -race, real PostgreSQL, ClickHouse and Redis included
	@set -e; eval "$$($(SERVICES))"; \
	echo "TEST_DATABASE_URL=$$TEST_DATABASE_URL TEST_CLICKHOUSE_URL=$$TEST_CLICKHOUSE_URL TEST_REDIS_URL=$$TEST_REDIS_URL" >&2; \
	$(GO) test -race -count=1 $(TESTFLAGS) ./...
	@$(MAKE) --no-print-directory test-cluster

test-cluster: ## several instances on one PostgreSQL and ClickHouse, without -race, held to the propagation bound of 100 ms
	@set -e; eval "$$($(SERVICES))"; \
	CAUSEWAY_CLUSTER_STRICT=1 $(GO) test -count=1 -v -run '^TestCluster' ./cmd/causeway/

bench: ## benchmarks, figures printed as a table with ratios against baselines of the same run
	@set -e; eval "$$($(SERVICES))"; \
	{ $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 1 ./eventstore/open/; \
	  $(GO) test -run '^$$' -bench Replay -benchtime 1x -count 1 -timeout 30m ./projections/; \
	  $(GO) test -run '^$$' -bench AppendToReadModelLag -benchtime 2000x -count 1 ./projections/; \
	  $(GO) test -run '^$$' -bench 'ClickHouseIngest|GroupsLatency|SpoolWhileDown' -benchtime 1x -count 1 -timeout 60m ./analytics/; \
	  $(GO) test -run '^$$' -bench LogPath -benchtime 5x -count 1 ./analytics/; \
	  $(GO) test -run '^$$' -bench Leases -benchtime 200000x -count 1 ./ledger/postgres/; \
	  $(GO) test -run '^$$' -bench . -benchtime 1s -count 1 ./cache/semantic/; \
	  $(GO) test -run '^$$' -bench '^BenchmarkCache$$' -benchtime 2000x -count 1 ./http/; \
	  $(GO) test -run '^$$' -bench '^BenchmarkGuardrails$$' -benchtime 1000x -count 1 ./http/; \
	  $(GO) test -run '^$$' -bench '^BenchmarkHook$$' -benchtime 200x -count 1 ./guardrails/; \
	  $(GO) test -run '^$$' -bench '^BenchmarkSink$$' -benchtime 1s -count 1 ./metrics/; } | tee bench.txt | $(GO) run ./cmd/benchreport
	@bash scripts/bench-gateway.sh | tee bench-gateway.txt

lint: ## gofmt, go vet, and the import boundaries of scripts/boundaries.sh (domain/ on the standard library, the event store contract on no driver)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@GO=$(GO) bash scripts/boundaries.sh
	@GO=$(GO) bash scripts/boundaries_test.sh >/dev/null
	@echo "lint: ok"

services: ## start local PostgreSQL, ClickHouse and Redis for tests and print their URLs
	@$(SERVICES)

stop-services:
	@bash scripts/stop-services.sh

clean:
	rm -rf bin bench.txt bench-gateway.txt
