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

.PHONY: build test demo bench fuzz lint difftest onnx-testdata onnx-conformance

# ONNX's backend tests (Debian's libonnx-testdata: node tests,
# PyTorch-converted and PyTorch-operator models); go test's conformance
# suite (frontend/onnx, TestConformance) runs them when they are present.
ONNX_TESTDATA ?= /usr/share/libonnx-testdata/data

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test ./...

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
# canonicalize,optimize,lower,build (canonicalize,lower,build while no
# optimize step is registered), the VM against the reference evaluator after
# every pass; reports modules, ops covered and failures (CI runs 60 in go test).
# A failure is reduced and written to testdata/semcheck/regress.
N ?= 10000
difftest:
	$(GO) test ./semcheck -run='^TestDifferential$$' -v -count=1 -difftest.n=$(N)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

fuzz:
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzParse -fuzztime=$(FUZZTIME)
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzLexer -fuzztime=$(FUZZTIME)
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzDeferredParse -fuzztime=$(FUZZTIME)
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzDeferredReaders -fuzztime=$(FUZZTIME)
	$(GO) test ./passes -run='^$$' -fuzz=FuzzPipeline -fuzztime=$(FUZZTIME)
	$(GO) test ./barrier -run='^$$' -fuzz=FuzzCompile -fuzztime=$(FUZZTIME)
	$(GO) test ./lower -run='^$$' -fuzz=FuzzMemoryPasses -fuzztime=$(FUZZTIME)
	$(GO) test ./vm -run='^$$' -fuzz=FuzzExecutable -fuzztime=$(FUZZTIME)
	$(GO) test ./ir/tirenc -run='^$$' -fuzz=FuzzDecode -fuzztime=$(FUZZTIME)
	$(GO) test ./codegen -run='^$$' -fuzz=FuzzBuild -fuzztime=$(FUZZTIME)
	$(GO) test ./codegen -run='^$$' -fuzz=FuzzModelExecutables -fuzztime=$(FUZZTIME)
	$(GO) test ./frontend/onnx -run='^$$' -fuzz=FuzzImport -fuzztime=$(FUZZTIME)
	$(GO) test ./frontend/onnx -run='^$$' -fuzz=FuzzReadTensor -fuzztime=$(FUZZTIME)
	$(GO) test ./vm/blas -run='^$$' -fuzz=FuzzSgemm -fuzztime=$(FUZZTIME)
	$(GO) test ./tensor -run='^$$' -fuzz=FuzzReadNpy -fuzztime=$(FUZZTIME)
	$(GO) test ./tensor -run='^$$' -fuzz=FuzzReadNpz -fuzztime=$(FUZZTIME)
	$(GO) test ./vm/kernel -run='^$$' -fuzz=FuzzKernels -fuzztime=$(FUZZTIME)
	$(GO) test ./semcheck -run='^$$' -fuzz=FuzzDifferential -fuzztime=$(FUZZTIME)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
