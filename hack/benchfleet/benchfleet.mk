# bench-fleet: rangekeeper side by side with k9s on a test control plane with 5,000 and 50,000
# Running pods (hack/benchfleet). Not part of `make test`: it takes tens of minutes and both
# cores. Pass harness flags with BENCH_FLEET_FLAGS, e.g.
#   make bench-fleet BENCH_FLEET_FLAGS="-pods 5000 -idle 30s -cpu-window 20s"
BENCH_FLEET_FLAGS ?=

.PHONY: bench-fleet
bench-fleet: testbin
	BENCH=$(CURDIR)/bin/bench hack/benchfleet/build.sh
	KUBEBUILDER_ASSETS=$(TESTBIN) bin/bench/benchfleet $(BENCH_FLEET_FLAGS)
