package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/phasec/phasec/tensor"
)

// memoryBudget is run's --max-memory: every input it reads or makes and
// every storage the VM allocates is checked against the limit before the
// memory is taken, so a run that cannot fit stops with a message instead of
// the Go runtime's out-of-memory crash (or the operating system's kill).
type memoryBudget struct {
	limit  int64
	inputs atomic.Int64 // bytes of the arguments bound so far
}

// reserveTensor accounts for a tensor of dt and shape about to be made.
func (b *memoryBudget) reserveTensor(dt tensor.DType, shape []int64, what string) error {
	bytes := float64(dt.Size())
	for _, d := range shape {
		bytes *= float64(max(d, 0))
	}
	if bytes > float64(b.limit) {
		return b.exceeded(what, bytes, 0)
	}
	return b.reserve(int64(bytes), what)
}

func (b *memoryBudget) reserve(n int64, what string) error {
	if used := b.inputs.Load(); n > b.limit-used {
		return b.exceeded(what, float64(n), 0)
	}
	b.inputs.Add(n)
	return nil
}

func (b *memoryBudget) exceeded(what string, n float64, live int64) error {
	return fmt.Errorf("%s needs %s with %s of inputs and %s of live tensors, over --max-memory %s; give a larger --max-memory or smaller --symbolic values",
		what, formatBytes(n), formatBytes(float64(b.inputs.Load())), formatBytes(float64(live)), formatBytes(float64(b.limit)))
}

// allocator wraps the VM's allocator so that each storage is checked
// against the budget (its live bytes plus the inputs).
func (b *memoryBudget) allocator(inner tensor.Allocator) tensor.Allocator {
	return &budgetAllocator{Allocator: inner, budget: b}
}

type budgetAllocator struct {
	tensor.Allocator
	budget *memoryBudget
}

func (a *budgetAllocator) Alloc(n int64) (*tensor.Storage, error) {
	live := a.Allocator.Stats().Live
	if n > a.budget.limit-a.budget.inputs.Load()-live {
		return nil, a.budget.exceeded("a storage of the run", float64(n), live)
	}
	return a.Allocator.Alloc(n)
}

// defaultMaxMemory is half the machine's physical memory (MemTotal of
// /proc/meminfo), or 4 GiB where that cannot be read.
func defaultMaxMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
					return kb * 1024 / 2
				}
			}
		}
	}
	return 4 << 30
}

// byteSize is a --max-memory value: bytes, or a number with a unit (KB,
// MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024).
type byteSize int64

func (s *byteSize) String() string { return formatBytes(float64(*s)) }
func (s *byteSize) Type() string   { return "SIZE" }
func (s *byteSize) Set(text string) error {
	units := []struct {
		suffix string
		scale  float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, scale := strings.TrimSpace(text), 1.0
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, scale = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*scale > 1<<62 {
		return fmt.Errorf("want a positive size such as 4GiB or 500MB, got %q", text)
	}
	*s = byteSize(v * scale)
	return nil
}

// formatBytes prints a byte count in binary units.
func formatBytes(n float64) string {
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.1f TiB", n/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}
