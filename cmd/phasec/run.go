package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"

	"github.com/spf13/pflag"
)

const runUsage = "[--func main] [--input name=file.npy]... [--random-inputs] [--seed N] [--symbolic n=32]... " +
	"[--params PARAMS.npz] [-o out.npz] [--stats] [--repeat N] [--expect FILE.npy]... [build flags] MODEL.pvm|FILE.tvms|MODEL.onnx"

func init() {
	register(&command{
		name:    "run",
		summary: "run a function of an executable (or of a module, built first) on .npy inputs",
		usage:   runUsage,
		setup:   runRun,
	})
}

func runRun(fs *pflag.FlagSet) runFunc {
	var inputs, symbolic, expect repeatFlag
	fn := fs.String("func", "main", "the function to run")
	fs.Var(&inputs, "input", "bind parameter `name=file.npy` (repeatable; in parameter order without name=)")
	random := fs.Bool("random-inputs", false, "fill parameters without --input with random values (uniform in [-1, 1) for floats)")
	seed := fs.Uint64("seed", 1, "seed of --random-inputs")
	fs.Var(&symbolic, "symbolic", "value of a symbolic dimension for --random-inputs (`n=32`, repeatable)")
	outPath := fs.StringP("output", "o", "", "write the outputs to `out.npz`")
	paramsPath := fs.String("params", "", "bind parameters by name from `PARAMS.npz` (the weights phasec import wrote)")
	stats := fs.Bool("stats", false, "print instructions executed, time per function and kernel, allocations and peak bytes")
	repeat := fs.Int("repeat", 1, "run `N` times (timings over all runs)")
	fs.Var(&expect, "expect", "compare the outputs, in order, with `FILE.npy` (repeatable): fail beyond 1e-5 * max(1, |expected|)")
	bf := addBuildFlags(fs)
	return func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) != 1 || *repeat < 1 {
			fmt.Fprintf(stderr, "phasec run: want one MODEL.pvm or FILE.tvms (and --repeat >= 1)\nusage: phasec run %s\n", runUsage)
			return 2
		}
		syms := map[string]int64{}
		for _, kv := range symbolic {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || n < 0 {
				fmt.Fprintf(stderr, "phasec run: --symbolic %q: want name=non-negative integer\n", kv)
				return 2
			}
			syms[strings.TrimSpace(k)] = n
		}

		// Load: an executable, or a module built in memory.
		path := args[0]
		start := time.Now()
		var exe *vm.Executable
		var model *onnx.Result // an ONNX model's input and output names
		if strings.HasSuffix(path, ".tvms") || path == "-" || isONNX(path) {
			var mod *ir.Module
			var code int
			if !isONNX(path) {
				mod, code = parseInput(path, stdin, stderr)
			} else {
				mod, model, code = importONNX(path, stderr)
				for i, kv := range inputs {
					if name, file, ok := strings.Cut(kv, "="); ok {
						inputs[i] = onnxInputName(model, mod, name) + "=" + file
					}
				}
			}
			if mod == nil {
				return code
			}
			var ok bool
			if exe, ok = bf.compile(mod, args[0], stderr); !ok {
				return 1
			}
		} else {
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
			if exe, err = vm.Unmarshal(data); err != nil {
				fmt.Fprintf(stderr, "phasec run: %s: %v\n", path, err)
				return 1
			}
		}
		machine, err := loader.Link(exe, vm.Options{Stats: *stats})
		if err != nil {
			fmt.Fprintf(stderr, "phasec run: %s: %v\n", path, err)
			return 1
		}
		loadTime := time.Since(start)

		fi := exe.FuncIndex(*fn)
		if fi < 0 || exe.Funcs[fi].Kind != vm.FuncVM {
			fmt.Fprintf(stderr, "phasec run: %s has no function %q\n", path, *fn)
			return 1
		}
		var weights []tensor.Named
		if *paramsPath != "" {
			if weights, err = tensor.ReadNpz(*paramsPath); err != nil {
				fmt.Fprintf(stderr, "phasec run: --params: %v\n", err)
				return 1
			}
		}
		argv, err := bindInputs(&exe.Funcs[fi], inputs, weights, *random, *seed, syms)
		if err != nil {
			fmt.Fprintf(stderr, "phasec run: %v\n", err)
			return 1
		}

		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		var out vm.Value
		var total *vm.Stats
		times := make([]time.Duration, 0, *repeat)
		for i := 0; i < *repeat; i++ {
			t0 := time.Now()
			v, st, err := machine.Call(ctx, *fn, argv)
			times = append(times, time.Since(t0))
			if err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
			out = v
			if st != nil {
				if total == nil {
					total = st
				} else {
					total.Add(st)
				}
			}
		}

		named := flattenOutputs("output", out)
		if names := onnxOutputNames(model, len(named)); names != nil {
			for i := range named {
				named[i].Name = names[i]
			}
		}
		fmt.Fprintf(stdout, "%s: %d output(s)\n", *fn, len(named))
		for _, n := range named {
			fmt.Fprintf(stdout, "  %s\n", describe(n.Name, n.Value))
		}
		fmt.Fprintf(stdout, "load %s; run %s\n", fmtDur(loadTime), timingSummary(times))
		if total != nil {
			fmt.Fprintf(stdout, "stats over %d run(s):\n", *repeat)
			total.Print(stdout)
			b, n := exe.PlannedStaticBytes()
			fmt.Fprintf(stdout, "memory per run: plan %d bytes in %d storages (%d of constant size in the executable: %d bytes), allocator peak %d bytes\n",
				total.StorageBytes/int64(*repeat), total.Storages/int64(*repeat), n, b, total.Alloc.Peak)
		}
		if len(expect) > 0 {
			if err := compareExpected(stdout, named, expect); err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
		}
		if *outPath != "" {
			var arrays []tensor.Named
			for _, n := range named {
				if t, ok := n.Value.Tensor(); ok {
					arrays = append(arrays, tensor.Named{Name: n.Name, Tensor: t})
				}
			}
			if err := tensor.WriteNpz(*outPath, arrays); err != nil {
				fmt.Fprintf(stderr, "phasec run: %v\n", err)
				return 1
			}
		}
		return 0
	}
}

// bindInputs builds the argument list: --input files by parameter name (or
// in order), random tensors from the recorded signatures for the rest.
func bindInputs(f *vm.Function, inputs []string, params []tensor.Named, random bool, seed uint64, syms map[string]int64) ([]vm.Value, error) {
	argv := make([]vm.Value, f.NumArgs)
	set := make([]bool, f.NumArgs)
	for _, p := range params {
		idx := slices.Index(f.ParamNames, p.Name)
		if idx < 0 {
			return nil, fmt.Errorf("--params: %s has no parameter %q (parameters: %s)", f.Name, p.Name, strings.Join(f.ParamNames, ", "))
		}
		argv[idx], set[idx] = vm.TensorValue(p.Tensor), true
	}
	next := 0
	for _, in := range inputs {
		name, file, ok := strings.Cut(in, "=")
		idx := -1
		if ok {
			for i, p := range f.ParamNames {
				if p == name {
					idx = i
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("--input %s: %s has no parameter %q (parameters: %s)", in, f.Name, name, strings.Join(f.ParamNames, ", "))
			}
		} else {
			file = in
			for next < f.NumArgs && set[next] {
				next++
			}
			idx = next
			if idx >= f.NumArgs {
				return nil, fmt.Errorf("--input %s: %s takes only %d parameters", in, f.Name, f.NumArgs)
			}
		}
		t, err := tensor.ReadNpyFile(file)
		if err != nil {
			return nil, fmt.Errorf("--input %s: %w", in, err)
		}
		argv[idx], set[idx] = vm.TensorValue(t), true
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := range argv {
		if set[i] {
			continue
		}
		if !random {
			return nil, fmt.Errorf("parameter %s of %s has no --input (or pass --random-inputs)", f.ParamNames[i], f.Name)
		}
		if i >= len(f.Sigs) || !f.Sigs[i].Tensor || f.Sigs[i].DType == "" || f.Sigs[i].Dims == nil {
			return nil, fmt.Errorf("parameter %s of %s: cannot make a random input without a tensor annotation with known dtype and rank; pass --input", f.ParamNames[i], f.Name)
		}
		sg := f.Sigs[i]
		dt, err := tensor.ParseDType(sg.DType)
		if err != nil {
			return nil, err
		}
		shape := make([]int64, len(sg.Dims))
		for j, d := range sg.Dims {
			n, err := dimValue(d, syms)
			if err != nil {
				return nil, fmt.Errorf("parameter %s of %s, dimension %d: %w", f.ParamNames[i], f.Name, j, err)
			}
			shape[j] = n
		}
		t, err := tensor.NewChecked(dt, shape)
		if err != nil {
			return nil, err
		}
		for k := range int(t.NumElements()) {
			if dt.IsFloat() {
				t.SetFloat64(k, rng.Float64()*2-1)
			} else {
				t.SetFloat64(k, float64(rng.IntN(10)))
			}
		}
		argv[i] = vm.TensorValue(t)
	}
	return argv, nil
}

// dimValue evaluates a recorded dimension: an integer, a symbolic variable
// given by --symbolic, or a product/sum of those.
func dimValue(d string, syms map[string]int64) (int64, error) {
	d = strings.TrimSpace(d)
	for _, op := range []string{" + ", " * "} {
		if a, b, ok := strings.Cut(d, op); ok {
			x, err := dimValue(a, syms)
			if err != nil {
				return 0, err
			}
			y, err := dimValue(b, syms)
			if err != nil {
				return 0, err
			}
			if op == " + " {
				return x + y, nil
			}
			return x * y, nil
		}
	}
	if n, err := strconv.ParseInt(d, 10, 64); err == nil {
		return n, nil
	}
	if n, ok := syms[d]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("symbolic dimension %q has no value: pass --symbolic %s=N", d, d)
}

type namedValue struct {
	Name  string
	Value vm.Value
}

// flattenOutputs names the leaves of a (possibly nested) tuple result.
func flattenOutputs(prefix string, v vm.Value) []namedValue {
	t, ok := v.Tuple()
	if !ok {
		return []namedValue{{prefix, v}}
	}
	var out []namedValue
	for i, f := range t.Fields {
		out = append(out, flattenOutputs(fmt.Sprintf("%s_%d", prefix, i), f)...)
	}
	return out
}

// describe prints a value NumPy-style: dtype, shape and leading values.
func describe(name string, v vm.Value) string {
	if t, ok := v.Tensor(); ok {
		dims := make([]string, len(t.Shape))
		for i, d := range t.Shape {
			dims[i] = strconv.FormatInt(d, 10)
		}
		shape := "(" + strings.Join(dims, ", ")
		if len(dims) == 1 {
			shape += ","
		}
		shape += ")"
		return fmt.Sprintf("%s: %s %s %s", name, t.DType, shape, vm.Preview(t, 8))
	}
	return fmt.Sprintf("%s: %s", name, v)
}

func timingSummary(ts []time.Duration) string {
	var sum, lo time.Duration
	for i, t := range ts {
		sum += t
		if i == 0 || t < lo {
			lo = t
		}
	}
	if len(ts) == 1 {
		return fmtDur(ts[0])
	}
	return fmt.Sprintf("%d times: mean %s, min %s", len(ts), fmtDur(sum/time.Duration(len(ts))), fmtDur(lo))
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6)
}

// compareExpected checks each output against an expected .npy (fp32
// tolerance 1e-5, relative beyond magnitude 1) and prints the distance.
func compareExpected(w io.Writer, outs []namedValue, files []string) error {
	if len(files) > len(outs) {
		return fmt.Errorf("--expect: %d files for %d outputs", len(files), len(outs))
	}
	for i, file := range files {
		want, err := tensor.ReadNpyFile(file)
		if err != nil {
			return fmt.Errorf("--expect: %w", err)
		}
		got, ok := outs[i].Value.Tensor()
		if !ok || got.DType != want.DType || tensor.FormatShape(got.Shape) != tensor.FormatShape(want.Shape) {
			return fmt.Errorf("%s: got %s, expected %s%s from %s", outs[i].Name, outs[i].Value, want.DType, tensor.FormatShape(want.Shape), file)
		}
		worst, at := 0.0, 0
		for k := range int(want.NumElements()) {
			g, e := got.Float64At(k), want.Float64At(k)
			if d := math.Abs(g-e) / math.Max(1, math.Abs(e)); d > worst || math.IsNaN(d) {
				worst, at = d, k
			}
		}
		fmt.Fprintf(w, "%s vs %s: max error %.3g (tolerance 1e-5)\n", outs[i].Name, file, worst)
		if !(worst <= 1e-5) {
			return fmt.Errorf("%s differs from %s at element %d: %g vs %g", outs[i].Name, file, at, got.Float64At(at), want.Float64At(at))
		}
	}
	return nil
}
