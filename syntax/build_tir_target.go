package syntax

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Target strings: T.target("llvm -mcpu=skylake") as TVM's parser reads it
// (tvm.target.Target(str)) and its printer writes it back, the exported
// configuration dict (Target::Export): the kind, its default keys, "tag",
// the attributes the string sets and the ones the kind's target parser
// fills in. Only kinds whose expansion does not depend on the machine's
// devices beyond what is documented here are accepted; for the others the
// diagnostic asks for the dict form TVM prints.

// targetAttrType is how a "-name=value" option is typed: string, int,
// bool, or a comma-separated list of strings.
type targetAttrType uint8

const (
	tString targetAttrType = iota
	tInt
	tBool
	tList
)

// targetKind is a kind's registration (src/target/target_kind.cc).
type targetKind struct {
	keys     []string
	attrs    map[string]targetAttrType
	defaults ir.Attrs
	// parse completes the configuration as the kind's target parser does.
	parse func(cfg ir.Attrs) error
}

var fastMathAttrs = []string{"fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz",
	"fast-math-arcp", "fast-math-contract", "fast-math-reassoc"}

var targetKinds = map[string]*targetKind{
	"llvm": {keys: []string{"cpu"}, attrs: withFlags(map[string]targetAttrType{
		"mattr": tList, "mcpu": tString, "mtriple": tString, "mfloat-abi": tString, "mabi": tString,
		"num-cores": tInt, "opt-level": tInt, "cl-opt": tList, "jit": tString, "vector-width": tInt,
	}, fastMathAttrs), parse: parseCPUTarget},
	"c": {keys: []string{"cpu"}, attrs: map[string]targetAttrType{
		"mcpu": tString, "march": tString, "workspace-byte-alignment": tInt, "constants-byte-alignment": tInt,
	}, parse: parseCPUTarget},
	"cuda": {keys: []string{"cuda", "gpu"}, attrs: map[string]targetAttrType{
		"mcpu": tString, "arch": tString, "max_shared_memory_per_block": tInt, "max_threads_per_block": tInt,
		"thread_warp_size": tInt, "registers_per_block": tInt, "l2_cache_size_bytes": tInt, "max_num_threads": tInt,
	}, defaults: ir.Attrs{"thread_warp_size": int64(32), "max_num_threads": int64(1024)}, parse: parseCUDATarget},
}

func withFlags(m map[string]targetAttrType, flags []string) map[string]targetAttrType {
	for _, f := range flags {
		m[f] = tBool
	}
	return m
}

// systemTriple is what TVM's DetectSystemTriple (LLVM's default target
// triple) gives on the x86-64 Linux machines TVM's printed modules come
// from; phasec cannot ask LLVM, so this is an assumption, also made by the
// dict-form corpus files.
const systemTriple = "x86_64-pc-linux-gnu"

// parseCPUTarget is tvm::target::parsers::cpu::ParseTarget for the
// targets phasec expands: an llvm target with neither -mtriple nor -mcpu
// gets the system triple. Arm triples and cores take TVM's aprofile /
// mprofile parsers, which add feature sets phasec does not model.
func parseCPUTarget(cfg ir.Attrs) error {
	triple, hasTriple := cfg["mtriple"].(string)
	mcpu, hasCPU := cfg["mcpu"].(string)
	if cfg["kind"] == "llvm" && !hasTriple && !hasCPU {
		cfg["mtriple"] = systemTriple
	}
	for _, p := range []string{"aarch64", "arm", "thumb"} {
		if strings.HasPrefix(triple, p) {
			return fmt.Errorf("an Arm -mtriple (%s) adds TVM's aprofile features", triple)
		}
	}
	if strings.HasPrefix(mcpu, "cortex-m") {
		return fmt.Errorf("an Arm M-profile -mcpu (%s) adds TVM's mprofile features", mcpu)
	}
	return nil
}

// parseCUDATarget is TVM's UpdateCUDAAttrs: without -arch it uses the
// first GPU's compute version, and "sm_50" when there is none, which is
// what phasec assumes (it sees no GPU).
func parseCUDATarget(cfg ir.Attrs) error {
	if arch, ok := cfg["arch"].(string); ok {
		if !strings.HasPrefix(arch, "sm_") {
			return fmt.Errorf("-arch=%s: a CUDA arch starts with sm_", arch)
		}
		return nil
	}
	cfg["arch"] = "sm_50"
	return nil
}

// targetFromString expands a target string ("llvm -mcpu=skylake
// -mattr=+avx2,+fma") into the configuration TVM exports for it.
func targetFromString(s string) (ir.Attrs, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty target string")
	}
	name := fields[0]
	kind, ok := targetKinds[name]
	if !ok {
		known := slices.Sorted(func(yield func(string) bool) {
			for k := range targetKinds {
				if !yield(k) {
					return
				}
			}
		})
		return nil, fmt.Errorf("target kind %q: phasec expands the string form only for %s", name, strings.Join(known, ", "))
	}
	cfg := ir.Attrs{"kind": name, "tag": ""}
	for k, v := range kind.defaults {
		cfg[k] = v
	}
	for _, f := range fields[1:] {
		opt, ok := strings.CutPrefix(f, "-")
		opt = strings.TrimPrefix(opt, "-")
		key, val, hasVal := strings.Cut(opt, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("expected -name=value in a target string, found %q", f)
		}
		typ, known := kind.attrs[key]
		if !known {
			return nil, fmt.Errorf("target kind %s has no attribute %q (or phasec does not expand it)%s", name, key, didYouMean(key, slices.Collect(func(yield func(string) bool) {
				for k := range kind.attrs {
					if !yield(k) {
						return
					}
				}
			}), ""))
		}
		if !hasVal && typ != tBool {
			return nil, fmt.Errorf("-%s needs a value", key)
		}
		switch typ {
		case tString:
			cfg[key] = val
		case tInt:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("-%s=%s: expected an integer", key, val)
			}
			cfg[key] = n
		case tBool:
			switch val {
			case "", "true", "1":
				cfg[key] = true
			case "false", "0":
				cfg[key] = false
			default:
				return nil, fmt.Errorf("-%s=%s: expected true or false", key, val)
			}
		case tList:
			var items []any
			for _, x := range strings.Split(val, ",") {
				items = append(items, x)
			}
			cfg[key] = items
		}
	}
	keys := make([]any, len(kind.keys))
	for i, k := range kind.keys {
		keys[i] = k
	}
	cfg["keys"] = keys
	if kind.parse != nil {
		if err := kind.parse(cfg); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}
