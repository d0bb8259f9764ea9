# Parley: `make run` starts the server on its embedded defaults; `make test` runs every test.
GO      ?= go
BIN     := bin/parley
PKGS    := ./...
BENCH   ?= .
COUNT   ?= 1

.PHONY: run test test-long lint typecheck build bench bench-knowledge fuzz chart-check clean

# scripts/run.sh starts bin/fakellm as the model first when no model key is set.
run: build
	./scripts/run.sh

# Every command: bin/parley, bin/fakellm (a fake model for demos) and
# bin/parleyload (the load generator of docs/performance.md).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ ./cmd/...

# PostgreSQL-backed suites also run when PARLEY_TEST_DATABASE_URL is set.
# Long scenarios run a short case here; test-long runs them at full size
# (docs/testing.md, "Running Parley's own tests"). The browser tests are the
# longest package, so they are listed first: go test starts packages in the
# order given, and the others then run beside them instead of after them.
TEST_PKGS = $(shell $(GO) list ./web/webtest $(PKGS))
test:
	$(GO) test -timeout 20m -count=1 $(TEST_PKGS)

# The packages whose tests use pkg/longtest, with PARLEY_TEST_LONG=1: soak
# runs, kill-and-restart loops, the real binary, several server processes.
LONG_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' 'longtest\.' cmd pkg web)))
test-long:
	PARLEY_TEST_LONG=1 $(GO) test -timeout 30m -count=1 $(addprefix ./,$(LONG_PKGS))

# The Helm chart (deploy/helm/parley, docs/deploy.md): helm lint and a dry-run install
# through Helm's Go module, every rendered object decoded strictly into its Kubernetes
# API type and checked. No cluster; the Go module proxy is the only network it needs.
# A module of its own, so the main module does not depend on Helm and Kubernetes.
chart-check:
	cd deploy/helm/chartcheck && $(GO) vet ./... && $(GO) test -count=1 ./...

# staticcheck at a pinned version that knows this Go release; `go run`
# fetches it once into the module cache.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: typecheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

# tsc --checkJs over the admin UI and the widget (web/static/tsconfig.json), with the
# TypeScript that .ci/install-tsc.sh pins; without it, a message and no check.
TSC ?= .ci/tsc/node_modules/.bin/tsc
typecheck:
	@if [ -x "$(TSC)" ]; then $(TSC) -p web/static/tsconfig.json && echo "typecheck: web/static ok"; \
	else echo "typecheck: skipped, $(TSC) not found (run .ci/install-tsc.sh)"; fi

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count=$(COUNT) $(PKGS)

# The knowledge retrieval benchmarks (docs/performance.md, "Knowledge retrieval"): over the
# PostgreSQL 15 documentation that Debian's postgresql-doc-15 ships (apt-get install
# postgresql-doc-15; KNOWLEDGE_CORPUS= another copy), recall@5 and MRR of each search mode,
# hybrid query latency at 10,000 and 100,000 chunks, and a 300-page PDF through the worker.
# PARLEY_TEST_DATABASE_URL adds PostgreSQL. Without the corpus they skip, saying so.
KNOWLEDGE_CORPUS ?= /usr/share/doc/postgresql-doc-15/html
bench-knowledge:
	@test -d "$(KNOWLEDGE_CORPUS)" || { echo "bench-knowledge: no corpus at $(KNOWLEDGE_CORPUS): apt-get install postgresql-doc-15, or set KNOWLEDGE_CORPUS"; exit 1; }
	KNOWLEDGE_BENCH_CORPUS=$(KNOWLEDGE_CORPUS) $(GO) test -run '^$$' -bench '^BenchmarkKnowledgeQuality$$' -benchtime 1x -timeout 30m ./pkg/knowledge/retrieve
	KNOWLEDGE_BENCH_CORPUS=$(KNOWLEDGE_CORPUS) $(GO) test -run '^$$' -bench '^BenchmarkKnowledgeLatency$$' -benchtime 200x -timeout 60m ./pkg/knowledge/retrieve
	$(GO) test -run '^$$' -bench '^BenchmarkKnowledgeIngestPDF$$' -benchtime 1x -timeout 30m ./pkg/knowledge/ingest

# A short fuzzing pass over every parser; FUZZTIME=5m for a longer one.
FUZZTIME ?= 20s
FUZZ_TARGETS := \
	./pkg/botconfig:FuzzLoad \
	./pkg/botconfig:FuzzParseTemplate \
	./pkg/botconfig:FuzzRender \
	./pkg/outbound:FuzzLegacyIPv4 \
	./pkg/llm/openai:FuzzNormalizeArguments \
	./pkg/llm/llmtest:FuzzServerRequest \
	./pkg/tool/mcptool:FuzzSubstitute \
	./pkg/api:FuzzSSEFrameRoundTrips \
	./pkg/dialog:FuzzImageHeader \
	./pkg/bottest:FuzzParse \
	./pkg/pii:FuzzMask \
	./pkg/knowledge/chunk:FuzzSplit
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

clean:
	rm -rf bin
