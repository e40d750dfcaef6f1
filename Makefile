# phasec build targets. `make demo` is the main job; `make test` is what CI runs.
GO ?= go
FUZZTIME ?= 20s
EXAMPLE ?= testdata/models/mlp_legalized.tvms
# The furthest pipeline the implemented passes complete on EXAMPLE: through the
# build barrier (memory planning, kills, VM builtins, ComputePrimValue,
# VMShapeLower's shape heap and checks, global symbols) to phase build, what VM
# code generation takes.
DEMO_PASSES ?= canonicalize,lower,build

.PHONY: build test demo bench fuzz lint

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test ./...

# The main job: compile the bundled example model (the legalized MLP with a
# symbolic batch) through the phase barriers, printing the result and the
# per-pass timing.
demo:
	$(GO) run ./cmd/phasec opt --passes $(DEMO_PASSES) --time-passes $(EXAMPLE)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

fuzz:
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzParse -fuzztime=$(FUZZTIME)
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzLexer -fuzztime=$(FUZZTIME)
	$(GO) test ./passes -run='^$$' -fuzz=FuzzPipeline -fuzztime=$(FUZZTIME)
	$(GO) test ./barrier -run='^$$' -fuzz=FuzzCompile -fuzztime=$(FUZZTIME)
	$(GO) test ./lower -run='^$$' -fuzz=FuzzMemoryPasses -fuzztime=$(FUZZTIME)
	$(GO) test ./vm -run='^$$' -fuzz=FuzzExecutable -fuzztime=$(FUZZTIME)
	$(GO) test ./vm/blas -run='^$$' -fuzz=FuzzSgemm -fuzztime=$(FUZZTIME)
	$(GO) test ./vm/tensor -run='^$$' -fuzz=FuzzReadNpy -fuzztime=$(FUZZTIME)
	$(GO) test ./vm/tensor -run='^$$' -fuzz=FuzzReadNpz -fuzztime=$(FUZZTIME)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
