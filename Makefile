# liblock — one Redlock core in Go, a C ABI, a WASI module, Node and Python bindings.
# `make demo` and `make test` do every bit of set-up themselves.
SHELL   := bash
GO      ?= go
BUILD   := build
CORE_GO := $(shell find core -name '*.go' -not -name '*_test.go') go.mod go.sum

.PHONY: all build deps dist docs test test-go test-c test-node test-python test-java test-wasm test-wasm-go test-wasm-node test-wasm-python test-interop test-dist test-snippets test-docs nodes sim fuzz soak demo bench bench-go clean

all: build

deps:
	@bash .ci/deps.sh

## build: liblock.so + liblock.h, liblock.wasm, the liblock command, and the test harness (redisnodes, faultproxy)
build: $(BUILD)/liblock $(BUILD)/redisnodes $(BUILD)/faultproxy $(if $(wildcard capi/*.go),$(BUILD)/liblock.so $(BUILD)/liblock.h) $(if $(wildcard wasm/module/*.go),$(BUILD)/liblock.wasm)

$(BUILD)/liblock.so $(BUILD)/liblock.h &: $(CORE_GO) $(wildcard capi/*.go capi/*.c capi/*.h)
	@mkdir -p $(BUILD)
	CGO_ENABLED=1 $(GO) build -trimpath -tags liblock_nootel -buildmode=c-shared -ldflags='-s -w' -o $(BUILD)/liblock.so ./capi
	cp capi/liblock.h $(BUILD)/liblock.h   # the hand-written header replaces cgo's generated one

# go build for wasip1, then wasm-opt -Oz (binaryen, installed by deps): see the script.
$(BUILD)/liblock.wasm: $(CORE_GO) $(filter-out %_test.go,$(wildcard wasm/module/*.go)) wasm/scripts/build.sh | deps
	@mkdir -p $(BUILD)
	GO=$(GO) bash wasm/scripts/build.sh $@

# The liblock command: one static binary (no cgo).
$(BUILD)/liblock: $(CORE_GO)
	@mkdir -p $(BUILD)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o $@ ./core/cmd/liblock

$(BUILD)/redisnodes: $(CORE_GO)
	@mkdir -p $(BUILD)
	$(GO) build -o $@ ./core/testkit/redistest/redisnodes

$(BUILD)/faultproxy: $(CORE_GO)
	@mkdir -p $(BUILD)
	$(GO) build -o $@ ./core/testkit/redistest/faultproxy/cmd/faultproxy

## nodes: three Redis nodes on 127.0.0.1:7001-7003 (the ones every README snippet uses), in the foreground; Ctrl-C stops them
nodes: deps $(BUILD)/redisnodes
	@$(BUILD)/redisnodes -n 3 -port 7001 -hold

## dist: build/dist/: every release artifact (.ci/dist/build.sh): the Python wheels
## (py3-none-any with liblock.wasm; manylinux2014 x86_64 and aarch64 with liblock.so too),
## the sdist, the liblock-cli wheels, the npm tarballs (liblock: liblock.wasm and
## prebuilt/linux-{x64,arm64}/liblock.so; liblock-cli: the command), the static commands.
## Native files are cross-built with zig against glibc 2.17 (zig and qemu: .ci/dist/tools.sh)
dist: deps build
	GO=$(GO) bash .ci/dist/build.sh $(BUILD)/dist

## test: every suite, three at a time (.ci/test-all.sh): three workers each take the next suite
## of TEST_SUITES, which lists them longest first (their times on a two-core machine), so the
## long ones start at once and the short ones fill the gaps; most suites wait on Redis round
## trips, node timeouts and child processes, not the CPU. A table of each suite's time at the end
TEST_SUITES := test-go test-wasm-python test-interop test-dist test-wasm-go test-python \
               test-snippets test-node test-c test-wasm-node test-java test-docs
TEST_JOBS   ?= 3
test: deps build
	bash .ci/test-all.sh -j $(TEST_JOBS) $(TEST_SUITES)

# The wasm host's tests run in test-wasm, not twice. The engine's simulation runs twice: once
# under the race detector at a small size (the seeds run on goroutines side by side, so state
# shared between engines would show), then without it at an eighth of make sim's size (each
# engine is single-threaded: the detector finds nothing more there and slows it thirtyfold).
test-go: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 40m -skip '^TestSim' $$($(GO) list ./... | grep -v '/wasm')
	$(GO) test -race -count=1 -timeout 20m -run '^TestSimSafety$$' ./core/engine/
	$(GO) test -count=1 -timeout 20m -run '^TestSim' ./core/engine/ -args -sim.quick

## sim: the engine's deterministic simulation at full size (≥ 1M operations; test-go runs an eighth
## of it and every TestSimBug* regression); SIM_LONG=1 for the long run (random
## seeds, up to an hour; a failure prints its replay command)
sim:
	$(GO) test -run 'TestSim' -count=1 -timeout 60m ./core/engine/ $(if $(SIM_LONG),-args -sim.long)

## fuzz: every Go fuzz target (RESP decoder and encoder, the engine fed any node reply, the host
## protocol's decoders, the C configuration parsers, node URLs) for FUZZ_TIME each (default 60s),
## one after the other; crashers stay in the package's testdata/fuzz/, which `go test` runs as seeds
fuzz:
	GO=$(GO) bash .ci/fuzz.sh

## soak: every primitive in every runtime and backend (Go native and over liblock.wasm, Node
## native and wasm, Python blocking and asyncio, native and wasm) against 5 real redis-servers
## for SOAK_TIME (default 30m), one node of five frozen or killed and restarted every few
## seconds; samples RSS, fds, goroutines, threads, heap, Node's handles, Python's live handles
## and Redis keys every SOAK_SAMPLE (default 10s); fails on growth over the second half or a
## key left behind (core/soak_test.go, .ci/soak.sh); not part of make test
SOAK_TIME   ?= 30m
SOAK_SAMPLE ?= 10s
soak: deps build
	SOAK_TIME=$(SOAK_TIME) SOAK_SAMPLE=$(SOAK_SAMPLE) GO=$(GO) bash .ci/soak.sh

test-c: deps build
	bash capi/test/run.sh

test-python: deps build
	bash bindings/python/scripts/test.sh

test-node: deps build
	bash bindings/node/scripts/test.sh

## test-java: the Java binding (bindings/java, JUnit 5 against redis-servers the tests start;
## Maven's downloads cached in build/m2)
test-java: deps build
	bash bindings/java/scripts/test.sh

## test-wasm: the Go host's suite, then the Node and Python suites with backend=wasm
test-wasm: test-wasm-go test-wasm-node test-wasm-python
test-wasm-go: deps build
	bash wasm/scripts/test.sh
test-wasm-node: deps build
	bash bindings/node/scripts/test-wasm.sh
test-wasm-python: deps build
	bash bindings/python/scripts/test-wasm.sh

## test-interop: re-entry by token across runtimes: a lock taken in Node, Python or Go (native
## or wasm backend) re-entered by its token in another runtime's process, released from either
## side (sets up the Node packages, the Python venv and the Go child itself); then the shared
## behaviour suite (core/testkit/locktest) on Node native/wasm and Python asyncio/blocking
## native/wasm, each through a child process (bindings/interop/suite_test.go; ≈ 2.5 min)
test-interop: deps build
	GO=$(GO) bash bindings/interop/run.sh

## test-dist: `make dist`'s artifacts installed outside the repository (fresh venvs, fresh
## npm projects, no LIBLOCK_PATH), locking with both backends and with the native library
## absent (the wasm fallback); tsc --strict and mypy --strict against them; a wheel built
## from the sdist with Go; the aarch64 library and command under qemu; ELF and wheel tags;
## `go install ...@latest` from an empty module cache
test-dist: deps dist
	bash .ci/dist/test.sh $(BUILD)/dist
	bash bindings/python/scripts/test-dist.sh $(BUILD)/dist
	bash bindings/node/scripts/test-dist.sh $(BUILD)/dist

## test-snippets: every program snippet of the READMEs and docs/*.md (a `<!-- snippet: KIND -->` line before
## its fence) extracted and run as written against 3 redis-servers started for the run
test-snippets: deps build
	GO=$(GO) bash .ci/snippets.sh

## docs: the API reference: Python's rendered from its docstrings by pdoc into build/docs/python
## (a broken reference fails it), Go's `go doc -all ./core` into build/docs/go.txt (and
## pkg.go.dev; runnable examples in core/*_example_test.go); Node's is bindings/node/index.d.ts
docs:
	bash bindings/python/scripts/docs.sh $(BUILD)/docs/python
	@mkdir -p $(BUILD)/docs && $(GO) doc -all ./core > $(BUILD)/docs/go.txt && echo "docs: $(BUILD)/docs/go.txt"

## test-docs: no tracked file over 1 MB unless listed in .ci/large-files.txt, every relative link
## of README.md, docs/ and the package READMEs resolves, no dated line or issue reference in them
## (.ci/check-docs.sh), and the API reference builds
test-docs: docs
	bash .ci/check-docs.sh
	python3 .ci/check-cycles.py --self-test && python3 .ci/check-cycles.py

## demo: a local 3-node Redis set under build/demo, the examples, then the nodes are stopped
demo: deps build
	@rm -rf $(BUILD)/demo
	$(BUILD)/redisnodes -n 3 -dir $(BUILD)/demo -- bash .ci/demo.sh

## bench: medians beside baselines measured in the same run; every part's rows in
## build/bench/*.json, plotted (benchreport/plot) into build/bench/results.md and one SVG per scenario
bench: deps build bench-go
	@if [ -f bindings/python/scripts/bench.sh ]; then bash bindings/python/scripts/bench.sh; fi
	@if [ -f bindings/node/scripts/bench.sh ]; then bash bindings/node/scripts/bench.sh; fi
	@if [ -f wasm/scripts/bench.sh ]; then bash wasm/scripts/bench.sh; fi
	bash bindings/java/scripts/bench.sh   # the Java binding beside Redisson (1 and 5 nodes)
	$(GO) run ./core/internal/benchreport/plot -in $(BUILD)/bench

bench-go: deps $(if $(wildcard wasm/*.go),$(BUILD)/liblock.wasm)
	{ $(GO) test -run '^$$' -bench Pair -benchtime 2000x -count 5 ./core/ && \
	  $(GO) test -run '^$$' -bench Contention -benchtime 1000x -count 3 ./core/; } | $(GO) run ./core/internal/benchreport -json $(BUILD)/bench/go.json
	# the caller's wait: one process, liblock's callers beside bsm/redislock and go-redsync, pair by pair;
	# each caller's p50 over the best Go peer's (docs/benchmarks.md, "The caller's wait")
	mkdir -p $(BUILD)/bench && cd core/internal/waitpeers && WAITPEERS_BURST=1 LIBLOCK_WASM=$(abspath $(BUILD))/liblock.wasm \
	  $(GO) test -run '^$$' -bench WaitPeers -benchtime 300x . > $(abspath $(BUILD))/bench/waitpeers.txt
	grep -v -e '^Benchmark' -e 'ns/op' -e '^goos' -e '^goarch' -e '^pkg' -e '^cpu:' -e '^PASS' -e '^ok' $(BUILD)/bench/waitpeers.txt
	# the same in each of the VM's two regimes, made by pinning the client and the redis-servers
	WAITPEERS_BURST=1 LIBLOCK_WASM=$(abspath $(BUILD))/liblock.wasm GO=$(GO) \
	  bash core/internal/waitpeers/regimes.sh -test.benchtime 300x | tee $(BUILD)/bench/waitpeers-regimes.txt
	# liblock beside go-redsync on one Redis Cluster (a module of its own: go-redsync stays out of go.mod)
	cd core/internal/clusterpeers && LIBLOCK_BENCH_JSON=$(abspath $(BUILD))/bench/go-cluster.json \
	  $(GO) test -run '^$$' -bench ClusterPeers -benchtime 2000x -count 1 .
	$(GO) run ./core/internal/benchreport/plot -in $(BUILD)/bench

clean:
	rm -rf $(BUILD)
