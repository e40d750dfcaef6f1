package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/loader"
)

// timing is what the time subcommand prints (one JSON line).
type timing struct {
	MS float64 `json:"ms"` // median time per run
	N  int     `json:"n"`  // timed runs
	// Launches is the number of kernel calls in one run; WrittenBytes the
	// bytes those calls write into their output buffers (every
	// intermediate and the result: what fusion saves); PlanBytes the
	// storage the memory plan asks for (vm.builtin.alloc_storage).
	Launches     int64 `json:"launches"`
	WrittenBytes int64 `json:"written_bytes"`
	PlanBytes    int64 `json:"plan_bytes"`
	// MaxRelErr is max|phasec - ref| / max|ref| over the output.
	MaxRelErr float64 `json:"max_rel_err"`
}

// runTime is the time subcommand: the phasec side of one measurement, run
// in its own process so that GOMAXPROCS (the thread count of vm/blas and
// vm/kernel) is set before anything starts.
//
// It links the executable twice: once with Options.Stats and every kernel
// wrapped in a counter, for one run that counts launches and written bytes
// (so vm needs no counters of its own); and once plainly for the timed
// runs (one warm-up, then the median of up to -reps runs within -budget),
// which the counting therefore costs nothing. A model whose counting run
// already took the whole budget is not run again: that run's time is the
// measurement (n = 1, no warm-up).
func runTime(args []string) error {
	fs := flag.NewFlagSet("time", flag.ContinueOnError)
	params := fs.String("params", "", "`FILE.npz` binding every parameter by name")
	ref := fs.String("ref", "", "compare the output with `FILE.npy`")
	out := fs.String("o", "", "write the output to `FILE.npy`")
	reps := fs.Int("reps", 10, "at most `N` timed runs")
	budget := fs.Duration("budget", 3*time.Second, "stop timing after this long (at least one run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *params == "" {
		return fmt.Errorf("usage: time -params FILE.npz [-ref FILE.npy] [-o FILE.npy] [-reps N] [-budget D] MODEL.pvm")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	exe, err := vm.Unmarshal(data)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	argv, err := bind(exe, *params)
	if err != nil {
		return err
	}
	ctx := context.Background()

	// The counting run comes first and is timed too: for a model slower
	// than the budget it is the measurement (one cold run beats none), and
	// otherwise it pages the weights in before the warm-up.
	var c counter
	counting, err := loader.Link(exe, vm.Options{Stats: true, CompileKernel: c.compile})
	if err != nil {
		return err
	}
	t0 := time.Now()
	result, st, err := counting.Call(ctx, "main", argv)
	if err != nil {
		return err
	}
	times := []time.Duration{time.Since(t0)}
	var t timing
	t.Launches, t.WrittenBytes, t.PlanBytes = c.launches.Load(), c.written.Load(), st.StorageBytes

	if times[0] < *budget {
		machine, err := loader.Link(exe, vm.Options{})
		if err != nil {
			return err
		}
		if result, _, err = machine.Call(ctx, "main", argv); err != nil { // warm-up
			return err
		}
		times = times[:0]
		deadline := time.Now().Add(*budget)
		for len(times) < *reps && (len(times) == 0 || time.Now().Before(deadline)) {
			t0 := time.Now()
			if result, _, err = machine.Call(ctx, "main", argv); err != nil {
				return err
			}
			times = append(times, time.Since(t0))
		}
	}
	t.MS, t.N = median(times), len(times)

	y, ok := result.Tensor()
	if !ok {
		return fmt.Errorf("main returned %s, want a tensor", result.Kind())
	}
	if *ref != "" {
		want, err := tensor.ReadNpyFile(*ref)
		if err != nil {
			return err
		}
		if t.MaxRelErr, err = maxRelErr(y, want); err != nil {
			return err
		}
	}
	if *out != "" {
		if err := tensor.WriteNpyFile(*out, y); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(t)
}

// bind reads the parameters of main, by name, from an .npz.
func bind(exe *vm.Executable, path string) ([]vm.Value, error) {
	fi := exe.FuncIndex("main")
	if fi < 0 {
		return nil, fmt.Errorf("the executable has no function main")
	}
	arrays, err := tensor.ReadNpz(path)
	if err != nil {
		return nil, err
	}
	byName := map[string]*tensor.Tensor{}
	for _, a := range arrays {
		byName[a.Name] = a.Tensor
	}
	f := &exe.Funcs[fi]
	argv := make([]vm.Value, len(f.ParamNames))
	for i, name := range f.ParamNames {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("%s has no array for parameter %s of main", path, name)
		}
		argv[i] = vm.TensorValue(t)
	}
	return argv, nil
}

// maxRelErr is max|got - want| / max|want|: the error relative to the
// output's scale (elementwise relative error is meaningless where an output
// crosses zero).
func maxRelErr(got, want *tensor.Tensor) (float64, error) {
	if !slices.Equal(got.Shape, want.Shape) {
		return 0, fmt.Errorf("output shape %v, reference shape %v", got.Shape, want.Shape)
	}
	var diff, scale float64
	for i := range int(want.NumElements()) {
		g, w := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(g) != math.IsNaN(w) {
			return math.Inf(1), nil
		}
		diff = max(diff, math.Abs(g-w))
		scale = max(scale, math.Abs(w))
	}
	if scale == 0 {
		return diff, nil
	}
	return diff / scale, nil
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return ms(s[m])
	}
	return (ms(s[m-1]) + ms(s[m])) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// counter wraps every kernel of a counting VM: launches, and the bytes each
// launch writes into the buffers its TIR stores to.
type counter struct {
	launches, written atomic.Int64
}

func (c *counter) compile(k vm.Kernel) (abi.Kernel, error) {
	kern, err := loader.CompileKernel(k)
	if err != nil {
		return nil, err
	}
	f, err := loader.DecodeKernel(&k)
	if err != nil {
		return nil, err
	}
	ck := &countingKernel{inner: kern, outs: writtenParams(f), c: c}
	if _, ok := kern.(abi.ValueKernel); ok {
		return &countingValueKernel{ck}, nil
	}
	return ck, nil
}

// writtenParams lists the buffer parameters a PrimFunc stores to (matched by
// their data variable, which a DeclBuffer alias shares).
func writtenParams(f *ir.PrimFunc) []int {
	stored := map[*ir.PrimVar]bool{}
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		if st, ok := s.(*ir.BufferStore); ok {
			stored[st.Buffer.Data] = true
		}
		return true
	}})
	var outs []int
	for i := range f.Params {
		if b := f.ParamBuffer(i); b != nil && stored[b.Data] {
			outs = append(outs, i)
		}
	}
	return outs
}

type countingKernel struct {
	inner abi.Kernel
	outs  []int
	c     *counter
}

func (k *countingKernel) count(args []abi.Arg) {
	k.c.launches.Add(1)
	for _, i := range k.outs {
		if i < len(args) && args[i].T != nil {
			k.c.written.Add(args[i].T.NBytes())
		}
	}
}

func (k *countingKernel) Call(args []abi.Arg) error {
	k.count(args)
	return k.inner.Call(args)
}

type countingValueKernel struct{ *countingKernel }

func (k *countingValueKernel) CallValue(args []abi.Arg) (abi.Arg, error) {
	k.count(args)
	return k.inner.(abi.ValueKernel).CallValue(args)
}
