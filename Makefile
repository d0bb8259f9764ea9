# Parley: `make run` starts the server on its embedded defaults; `make test` runs every test.
GO      ?= go
BIN     := bin/parley
PKGS    := ./...
BENCH   ?= .
COUNT   ?= 1

.PHONY: run test lint build bench fuzz clean

run: build
	./$(BIN) serve

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/parley

# PostgreSQL-backed suites also run when PARLEY_TEST_DATABASE_URL is set.
test:
	$(GO) test -timeout 20m -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count=$(COUNT) $(PKGS)

# A short fuzzing pass over the parsers; FUZZTIME=5m for a longer one.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) ./pkg/botconfig
	$(GO) test -run '^$$' -fuzz FuzzParseTemplate -fuzztime $(FUZZTIME) ./pkg/botconfig
	$(GO) test -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME) ./pkg/botconfig

clean:
	rm -rf bin
