# phasec build targets. `make demo` is the main job; `make test` is what CI runs.
GO ?= go
FUZZTIME ?= 20s
EXAMPLE ?= testdata/models/mlp.tvms

.PHONY: build test demo bench fuzz lint

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test ./...

# The main job: compile the bundled example model through the phase barriers,
# printing the result and the per-pass timing.
demo:
	$(GO) run ./cmd/phasec opt --passes canonicalize,lower,build --time-passes $(EXAMPLE)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

fuzz:
	$(GO) test ./syntax -run='^$$' -fuzz=FuzzParse -fuzztime=$(FUZZTIME)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
