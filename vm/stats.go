package vm

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/phasec/phasec/tensor"
)

// Stats describes one call (Options.Stats): instructions executed, time per
// function (inclusive of callees) and per kernel, and the allocator's
// counters after the call.
type Stats struct {
	Instructions int64
	Funcs        []FuncStats   // functions that ran, by time
	Kernels      []KernelStats // kernels that ran, by time
	// StorageBytes and Storages count what vm.builtin.alloc_storage asked
	// for: the memory plan's storage, against which Alloc's peak (what the
	// allocator actually held, with pooling and size classes) compares.
	StorageBytes, Storages int64
	Alloc                  tensor.Stats
}

type FuncStats struct {
	Name         string
	Calls        int64
	Instructions int64
	Time         time.Duration
}

type KernelStats struct {
	Name  string
	Calls int64
	Time  time.Duration
}

type machineStats struct {
	storageBytes, storages int64
	funcs                  []struct {
		calls, instrs int64
		time          time.Duration
	}
	kernels []struct {
		calls int64
		time  time.Duration
	}
}

func newMachineStats(vm *VM) *machineStats {
	s := &machineStats{}
	s.funcs = make([]struct {
		calls, instrs int64
		time          time.Duration
	}, len(vm.funcs))
	s.kernels = make([]struct {
		calls int64
		time  time.Duration
	}, len(vm.kernels))
	return s
}

func (s *machineStats) reset(*Machine) {
	s.storageBytes, s.storages = 0, 0
	clear(s.funcs)
	clear(s.kernels)
}

func (m *Machine) collectStats() *Stats {
	st := &Stats{Instructions: m.steps, Alloc: m.alloc.Stats(), StorageBytes: m.stats.storageBytes, Storages: m.stats.storages}
	for i, f := range m.stats.funcs {
		if f.calls > 0 {
			st.Funcs = append(st.Funcs, FuncStats{Name: m.vm.funcs[i].name, Calls: f.calls, Instructions: f.instrs, Time: f.time})
		}
	}
	for i, k := range m.stats.kernels {
		if k.calls > 0 {
			st.Kernels = append(st.Kernels, KernelStats{Name: m.vm.exe.Kernels[i].Name, Calls: k.calls, Time: k.time})
		}
	}
	sort.SliceStable(st.Funcs, func(i, j int) bool { return st.Funcs[i].Time > st.Funcs[j].Time })
	sort.SliceStable(st.Kernels, func(i, j int) bool { return st.Kernels[i].Time > st.Kernels[j].Time })
	return st
}

// Add accumulates another call's statistics (for repeated runs).
func (s *Stats) Add(o *Stats) {
	s.Instructions += o.Instructions
	s.StorageBytes += o.StorageBytes
	s.Storages += o.Storages
	s.Alloc = o.Alloc
	s.Funcs = mergeFuncs(s.Funcs, o.Funcs)
	s.Kernels = mergeKernels(s.Kernels, o.Kernels)
}

// merge adds the entries of b into a, matching them by name.
func merge[T any](a, b []T, name func(*T) string, add func(dst *T, src *T)) []T {
	for i := range b {
		j := 0
		for j < len(a) && name(&a[j]) != name(&b[i]) {
			j++
		}
		if j == len(a) {
			a = append(a, b[i])
		} else {
			add(&a[j], &b[i])
		}
	}
	return a
}

func mergeFuncs(a, b []FuncStats) []FuncStats {
	return merge(a, b, func(f *FuncStats) string { return f.Name }, func(d, s *FuncStats) {
		d.Calls += s.Calls
		d.Instructions += s.Instructions
		d.Time += s.Time
	})
}

func mergeKernels(a, b []KernelStats) []KernelStats {
	return merge(a, b, func(k *KernelStats) string { return k.Name }, func(d, s *KernelStats) {
		d.Calls += s.Calls
		d.Time += s.Time
	})
}

// Print writes the statistics as a table.
func (s *Stats) Print(w io.Writer) {
	sort.SliceStable(s.Funcs, func(i, j int) bool { return s.Funcs[i].Time > s.Funcs[j].Time })
	sort.SliceStable(s.Kernels, func(i, j int) bool { return s.Kernels[i].Time > s.Kernels[j].Time })
	fmt.Fprintf(w, "instructions executed: %d\n", s.Instructions)
	fmt.Fprintf(w, "functions:\n")
	for _, f := range s.Funcs {
		fmt.Fprintf(w, "  %-24s %6d calls %8d instrs %12v\n", f.Name, f.Calls, f.Instructions, f.Time)
	}
	fmt.Fprintf(w, "kernels:\n")
	for _, k := range s.Kernels {
		fmt.Fprintf(w, "  %-24s %6d calls %12v  %10v/call\n", k.Name, k.Calls, k.Time, k.Time/time.Duration(max(k.Calls, 1)))
	}
	fmt.Fprintf(w, "storage requested (memory plan): %d bytes in %d alloc_storage calls\n", s.StorageBytes, s.Storages)
	a := s.Alloc
	fmt.Fprintf(w, "allocator (actual): %d allocations, %d reused, %d frees, peak %d bytes, live %d bytes\n", a.Allocs, a.Reuses, a.Frees, a.Peak, a.Live)
}
