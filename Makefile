# rangekeeper — `make demo` runs the demo range, `make test` runs every test.
GO       ?= go
BIN      := bin
PKGS     := ./...
K8S_TEST_PREREQS :=
K8S_TEST_ENV :=
# staticcheck is pinned and installed from the Go module proxy: a fresh clone needs nothing
# installed. Lint builds with -race, as `make test` does, so vet and staticcheck compile every
# dependency into the build cache once for both (without it a cold CI compiles the graph twice);
# staticcheck itself is built without it.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/tools/staticcheck-$(STATICCHECK_VERSION)
RACE_GOFLAGS := GOFLAGS="-race $$GOFLAGS"

# Fragments owned by subsystems (e.g. hack/testbin/testbin.mk builds the Kubernetes test binaries
# and appends to K8S_TEST_PREREQS / K8S_TEST_ENV).
-include hack/*/*.mk

.PHONY: all build test test-main test-k8s demo demo-down lint vet staticcheck bench fuzz clean ci-fresh ci-fresh-cold ci-fresh-cold-ci

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/ ./cmd/...
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/rangekeeper-demo-agent ./demos/agent

# Three test binaries at a time on 2 cores: most tests wait on the Docker Engine or a child
# process (a warm run at -p 2 kept the cores 60 % busy: 385 s of CPU in 643 s).
TEST_P ?= 3
# -vet=off: `make vet` runs every vet analyzer on every package; go test's own vet subset would
# compute the analyzers' facts for the whole dependency graph once more (150 CPU-s against 12
# without it for cli's test binary alone, measured warm). -ldflags='-s -w': no symbol
# table or DWARF in test binaries (15.8 → 11.4 CPU-s for cli's race link); race reports
# and panics symbolize from Go's own pclntab, which stays.
GO_TEST = $(GO) test -race -vet=off -ldflags='-s -w' -count=1 -p $(TEST_P) -timeout 25m
# `make test` = the Kubernetes tests (they need the control plane, hack/testbin) and every other
# package, side by side: a cold machine runs the others while the control plane still builds.
test:
	$(MAKE) -j2 test-main test-k8s

test-main:
	$(GO_TEST) $$($(GO) list $(PKGS) | grep -v '/backends/kubernetes')

test-k8s: $(K8S_TEST_PREREQS)
	$(K8S_TEST_ENV) $(GO_TEST) ./backends/kubernetes/...

demo: build
	./$(BIN)/rangekeeper demo

demo-down: build
	./$(BIN)/rangekeeper demo --down

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(BIN)/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv -f $(BIN)/tools/staticcheck $@

# lint = vet (and the cheap gates) + staticcheck; .ci/run runs staticcheck beside the tests, which
# leave the cores 40 % idle while they wait on the Docker Engine.
lint: vet staticcheck

vet:
	hack/check-outside-paths.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(RACE_GOFLAGS) $(GO) vet $(PKGS)
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy and commit the result"; exit 1; }

staticcheck: $(STATICCHECK)
	$(RACE_GOFLAGS) $(STATICCHECK) $(PKGS)

# Every fuzz target in the repository, FUZZTIME each (default 10m), FUZZJOBS at a time (default
# 1); stops at the first crash and keeps its input as a seed in the package's testdata/fuzz.
FUZZTIME ?= 10m
FUZZJOBS ?= 1
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZJOBS=$(FUZZJOBS) GO=$(GO) hack/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Rehearse a new user: clone HEAD into an empty temp directory and run .ci/run there.
ci-fresh:
	hack/ci-fresh.sh

ci-fresh-cold:
	hack/ci-fresh.sh --cold

# As a CI runner that keeps the Kubernetes test binaries' cache but no Go caches.
ci-fresh-cold-ci:
	hack/ci-fresh.sh --cold-ci

clean:
	rm -rf $(BIN)
