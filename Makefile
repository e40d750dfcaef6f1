# phasec build targets. `make demo` is the main job; `make test` is what CI runs.
GO ?= go
FUZZTIME ?= 20s
EXAMPLE ?= testdata/models/mlp.tvms
# The whole pipeline: the optimize barrier runs the optimization sequence
# (FoldConstant, CanonicalizeBindings, EliminateCommonSubexpr,
# DeadCodeElimination) to a fixpoint at opt level 2; the lower barrier
# legalizes the model's ops into TIR kernels (LegalizeOps) and lowers the
# calls and allocations; the build barrier plans memory, inserts kills, VM
# builtins, ComputePrimValue, VMShapeLower's shape heap and checks, global
# symbols: phase build, what VM code generation takes.
DEMO_PASSES ?= canonicalize,optimize,lower,build
# The demo's bundled inputs (batch 4) and the output a plain Go reference
# computes from them (codegen's TestMLPDemo checks both).
DEMO_INPUTS ?= testdata/models/mlp_inputs
DEMO_OUT ?= $(or $(TMPDIR),/tmp)/phasec-demo-mlp.pvm

.PHONY: build test demo bench bench-ort fuzz lint difftest browser-deps onnx-testdata onnx-conformance linearity

# ONNX's backend tests (Debian's libonnx-testdata: node tests,
# PyTorch-converted and PyTorch-operator models); go test's conformance
# suite (frontend/onnx, TestConformance) runs them when they are present.
ONNX_TESTDATA ?= /usr/share/libonnx-testdata/data

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test -timeout 30m ./...

onnx-testdata:
	@if [ -d $(ONNX_TESTDATA)/node ]; then echo "ONNX backend tests present in $(ONNX_TESTDATA)"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get install -y libonnx-testdata || { apt-get update && apt-get install -y libonnx-testdata; }; \
	else sudo apt-get install -y libonnx-testdata || { sudo apt-get update && sudo apt-get install -y libonnx-testdata; }; fi

# The conformance suite alone, its report written to onnx-conformance.txt
# (the committed baseline is frontend/onnx/testdata/conformance.txt).
onnx-conformance: onnx-testdata
	$(GO) test ./frontend/onnx -run='^TestConformance$$' -count=1 -v -onnx.testdata=$(ONNX_TESTDATA) -onnx.report=onnx-conformance.txt

# The main job: compile the bundled example model (an MLP written with
# R.matmul, R.add, R.nn.relu and R.nn.softmax, for a symbolic batch) from its
# TVMScript source through the phase barriers and VM code generation into an
# executable (with the per-pass timing), then run it on the bundled inputs,
# printing the output NumPy-style, its distance to the reference, the
# timings and the VM statistics.
demo:
	$(GO) run ./cmd/phasec build --passes $(DEMO_PASSES) --time-passes -o $(DEMO_OUT) $(EXAMPLE)
	$(GO) run ./cmd/phasec run --stats --repeat 20 $(foreach p,x w0 b0 w1 b1,--input $(p)=$(DEMO_INPUTS)/$(p).npy) --expect $(DEMO_INPUTS)/expected.npy $(DEMO_OUT)

# Differential testing: N random Relax modules (package ir/randmod) through
# canonicalize,optimize,lower,build, and CNN random convolutional networks
# (conv2d with random strides, padding, dilation and groups, pools,
# batch_norm, layer_norm, relu, residual adds: semcheck.GenerateCNN)
# through pipelines drawn from the registered passes that precede
# Legalized (ConvertLayout, FoldBatchnormToConv2D, ToMixedPrecision, ...)
# before optimize,lower,build; the VM against the reference evaluator
# after every pass, float16 tolerances once a pass computes in float16.
# Reports modules, ops covered and failures (CI runs 60 and 12 in go
# test). A failure is reduced and written to testdata/semcheck/regress.
# On a terminal a progress line shows how far it is.
N ?= 10000
CNN ?= 500
difftest:
	$(GO) test ./semcheck -run='^TestDifferential(CNN)?$$' -v -count=1 -difftest.n=$(N) -difftest.cnn=$(CNN) \
		-difftest.progress=$$(test -t 2 && echo true || echo false)

# Headless Chromium for the test that loads `phasec opt --html`'s page in a
# real browser (htmlview); without it that test skips, saying so, unless
# PHASEC_BROWSER_TESTS=1 (as in CI) makes its absence a failure.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -q && apt-get install -y -q chromium; }

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# phasec against ONNX Runtime (npm onnxruntime-node, pinned in
# bench/ort/package-lock.json; CPU provider, all graph optimizations) and
# phasec -O1 (no fusion) against the default pipeline, side by side in one
# run: the CNN, BERT-base layer, ResNet-18 and MLP of bench/ort/gen.py, one
# and two threads, outputs checked against ONNX Runtime's (max|d|/max|ort|
# <= 1e-4), ratios printed. Not part of `make test`: it installs what it
# needs (python3-onnx and python3-numpy with apt-get only if missing) and
# takes a few minutes. BENCH_ORT_FLAGS: e.g. -models bert_s128,mlp_b64
# -threads 1 -reps 0.5 (go run ./bench/ort -h).
BENCH_PYTHON ?= /usr/bin/python3
BENCH_ORT_FLAGS ?=
bench-ort:
	@$(BENCH_PYTHON) -c 'import onnx, numpy' 2>/dev/null || apt-get install -y python3-onnx python3-numpy
	@test -f bench/ort/node_modules/onnxruntime-node/package.json || \
		(cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
	$(GO) run ./bench/ort -go $(GO) -python $(BENCH_PYTHON) $(BENCH_ORT_FLAGS)

# Linearity of the passes (issue 22: 10k -> 100k bindings, ratio <= 11):
# for the model transformations and the ReferenceWalk yardsticks (BENCH=.
# adds the general passes' benchmarks), the 100k/10k ratio of instructions
# executed by the runs alone (callgrind: deterministic whatever the load;
# collector off, and on for GCBENCH) next to the CPU-time ratio (GOGC as
# set and off). Not part of `make test`: it installs valgrind with apt-get
# if missing and takes about 45 minutes at load 10 (14 of CPU-time runs,
# 33 of counts with JOBS=2; callgrind runs one at a time, niced, unless
# JOBS says otherwise; BENCH=. takes hours; LINEAR_SMALL=100000
# GOMEMLIMIT=16GiB compares 100k with 1M bindings, past the cache, CPU time
# only, about 25 minutes; scripts/linearity.sh lists the knobs).
linearity:
	GO=$(GO) ./scripts/linearity.sh

# Long fuzzing, for developers before they stop (CI runs only the seed
# corpora and committed regressions, deterministically, in `make test`):
# every Fuzz target of every package for FUZZTIME each. A finding is left in
# the package's testdata/fuzz directory: commit it and fix the bug.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./.ci/fuzz

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
