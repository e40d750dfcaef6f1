package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/loader"
)

// timing is what the time subcommand prints (one JSON line).
type timing struct {
	MS    float64 `json:"ms"`     // median wall time per run
	CPUms float64 `json:"cpu_ms"` // median process CPU time per run (all threads)
	N     int     `json:"n"`      // timed runs
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
// vm/kernel) is set before anything starts. It takes several executables
// of one model (the default pipeline and -O1) and prints one timing per
// executable, as a JSON array in argument order.
//
// Each executable is linked twice: once with Options.Stats and every kernel
// wrapped in a counter, for one run that counts launches and written bytes
// (so vm needs no counters of its own); and once plainly for the timed
// runs, which the counting therefore costs nothing. After one warm-up run
// each, the timed runs alternate between the executables (A B A B ...), so
// that the shared machine's load shifts fall on all of them alike and
// their ratio means something; each gets the median of up to -reps runs
// within -budget (per executable; at least one). If a counting run already
// took the whole budget, nothing runs again: the counting runs' times are
// the measurement (n = 1, cold).
//
// Besides the wall time it records the process's CPU time per run
// (getrusage: user and system, all threads), which the machine's other
// load stretches far less.
func runTime(args []string) error {
	fs := flag.NewFlagSet("time", flag.ContinueOnError)
	params := fs.String("params", "", "`FILE.npz` binding every parameter by name")
	ref := fs.String("ref", "", "compare every output with `FILE.npy`")
	out := fs.String("o", "", "write the output of executable i to `PREFIX`.i.npy")
	reps := fs.Int("reps", 10, "at most `N` timed runs per executable")
	budget := fs.Duration("budget", 3*time.Second, "stop timing after this long per executable (at least one run)")
	cpuProfile := fs.String("cpuprofile", "", "write a pprof CPU profile of the timed runs (after the warm-up) to `FILE`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 || *params == "" {
		return fmt.Errorf("usage: time -params FILE.npz [-ref FILE.npy] [-o PREFIX] [-reps N] [-budget D] MODEL.pvm...")
	}
	arrays, err := readParams(*params)
	if err != nil {
		return err
	}
	ctx := context.Background()
	n := fs.NArg()
	exes := make([]*vm.Executable, n)
	argvs := make([][]vm.Value, n)
	results := make([]vm.Value, n)
	timings := make([]timing, n)
	cold, coldCPU := make([]time.Duration, n), make([]time.Duration, n)
	slow := false
	for i, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if exes[i], err = vm.Unmarshal(data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// One set of parameter tensors for all (bound by name, the same
		// names in every executable of the model): the executables compete
		// for the cache with their code, not with copies of the weights.
		if argvs[i], err = bind(exes[i], arrays); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// The counting run, timed too: the measurement of a model slower
		// than the budget, and otherwise it pages the weights in.
		var c counter
		counting, err := loader.Link(exes[i], vm.Options{Stats: true, CompileKernel: c.compile})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		c0, t0 := cpuTime(), time.Now()
		v, st, err := counting.Call(ctx, "main", argvs[i])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		cold[i], coldCPU[i] = time.Since(t0), cpuTime()-c0
		slow = slow || cold[i] >= *budget
		results[i] = v
		timings[i].Launches, timings[i].WrittenBytes, timings[i].PlanBytes = c.launches.Load(), c.written.Load(), st.StorageBytes
	}

	times := make([][]time.Duration, n)
	cpu := make([][]time.Duration, n)
	if slow {
		for i := range n {
			times[i] = []time.Duration{cold[i]}
			cpu[i] = []time.Duration{coldCPU[i]}
		}
	} else {
		machines := make([]*vm.VM, n)
		for i := range n {
			var err error
			if machines[i], err = loader.Link(exes[i], vm.Options{}); err != nil {
				return err
			}
			if results[i], _, err = machines[i].Call(ctx, "main", argvs[i]); err != nil { // warm-up
				return err
			}
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
		deadline := time.Now().Add(time.Duration(n) * *budget)
		for r := 0; r < *reps && (r == 0 || time.Now().Before(deadline)); r++ {
			for i := range n {
				c0, t0 := cpuTime(), time.Now()
				v, _, err := machines[i].Call(ctx, "main", argvs[i])
				if err != nil {
					return err
				}
				times[i] = append(times[i], time.Since(t0))
				cpu[i] = append(cpu[i], cpuTime()-c0)
				// The previous output is done with: its storage serves the
				// next run, as ONNX Runtime's arena reuses its outputs'
				// memory (a fresh Go allocation per run faulted its pages
				// in every time: ~8% of the BERT layer).
				machines[i].Release(results[i])
				results[i] = v
			}
		}
	}

	var want *tensor.Tensor
	if *ref != "" {
		var err error
		if want, err = tensor.ReadNpyFile(*ref); err != nil {
			return err
		}
	}
	for i := range n {
		t := &timings[i]
		t.MS, t.CPUms, t.N = median(times[i]), median(cpu[i]), len(times[i])
		y, ok := results[i].Tensor()
		if !ok {
			return fmt.Errorf("%s: main returned %s, want a tensor", fs.Arg(i), results[i].Kind())
		}
		if want != nil {
			var err error
			if t.MaxRelErr, err = maxRelErr(y, want); err != nil {
				return fmt.Errorf("%s: %w", fs.Arg(i), err)
			}
		}
		if *out != "" {
			if err := tensor.WriteNpyFile(fmt.Sprintf("%s.%d.npy", *out, i), y); err != nil {
				return err
			}
		}
	}
	return json.NewEncoder(os.Stdout).Encode(timings)
}

// readParams reads an .npz into tensors by name.
func readParams(path string) (map[string]*tensor.Tensor, error) {
	arrays, err := tensor.ReadNpz(path)
	if err != nil {
		return nil, err
	}
	byName := map[string]*tensor.Tensor{}
	for _, a := range arrays {
		// Bound once and only read by every run: frozen, so kernels keep
		// their packed weights with them (ONNX Runtime prepacks its
		// initializers once per session likewise).
		a.Tensor.Storage.Freeze()
		byName[a.Name] = a.Tensor
	}
	return byName, nil
}

// bind binds the parameters of main by name.
func bind(exe *vm.Executable, byName map[string]*tensor.Tensor) ([]vm.Value, error) {
	fi := exe.FuncIndex("main")
	if fi < 0 {
		return nil, fmt.Errorf("the executable has no function main")
	}
	f := &exe.Funcs[fi]
	argv := make([]vm.Value, len(f.ParamNames))
	for i, name := range f.ParamNames {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("no array for parameter %s of main", name)
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

// cpuTime is the process's CPU time so far (user and system, all threads):
// what a run costs on a machine shared with other work, which stretches
// wall times but not this.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
