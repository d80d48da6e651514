# The two commands of the README: `make run` and `make test`. Everything
# they need beyond Go and Node (the npm packages pinned in package-lock.json,
# Java 17 for DynamoDB Local) is installed by the targets below.
SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: run run-lambdas test deps java vet bench fuzz lambdas clean

## run: start the whole service locally (DynamoDB Local in memory, demo key, API on :8080)
run: deps
	$(GO) build -o $(BIN)/devserver ./cmd/devserver
	exec $(BIN)/devserver

## run-lambdas: the real Lambda bootstraps behind a local API Gateway front, a Docker-free `sam local start-api` (:8080)
run-lambdas: deps
	$(GO) build -o $(BIN)/lambdas ./cmd/lambdas
	exec $(BIN)/lambdas

## test: vet and every test of the repository, integration tests included; then
## the HTTP suites of internal/api again against the Lambda bootstraps (SOURCEBASE_TARGET=lambdas)
test: deps
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	SOURCEBASE_TARGET=lambdas $(GO) test -count=1 ./internal/api

## bench: the benchmarks, with DynamoDB calls per request reported
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz: deps
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

## lambdas: build every function as a linux/arm64 bootstrap under bin/lambda/<name>/
lambdas:
	@set -e; for f in functions/*/; do n=$$(basename $$f); \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
	    -o $(BIN)/lambda/$$n/bootstrap ./$$f; echo "built $(BIN)/lambda/$$n/bootstrap"; done

deps: node_modules/.installed java

# node_modules/go.mod keeps Go files shipped inside npm packages (the CDK
# CLI's init templates) out of the module's ./... patterns.
# A node_modules that is a link to an install shared by several checkouts
# is left alone: npm ci would empty the directory it points to.
node_modules/.installed: package.json package-lock.json
	@if [ -L node_modules ]; then \
	  echo "node_modules links to $$(readlink node_modules): not reinstalling a shared install (run npm ci there if it is out of date)"; \
	else npm ci --no-audit --no-fund --loglevel=error; fi
	@printf 'module node_modules\n' > node_modules/go.mod
	@touch $@

# DynamoDB Local needs Java 17 or later; install it from Debian when missing.
java:
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  echo "installing openjdk-17-jre-headless for DynamoDB Local"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q openjdk-17-jre-headless; \
	fi

clean:
	rm -rf $(BIN) node_modules
