package vm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/tensor"
)

const callsPerRun = 1000

// buildCalls: main(a, b, c) runs callsPerRun calls of the trivial builtin
// test.nop3(%a, %b, %c) (three register arguments, like a kernel call),
// then returns.
func buildCalls(t testing.TB) *Executable {
	b := NewBuilder()
	b.BeginFunc("main", []string{"a", "b", "c"})
	r := b.NewReg()
	for i := 0; i < callsPerRun; i++ {
		b.CallPacked(r, "test.nop3", []Arg{RegArg(0), RegArg(1), RegArg(2)}, Pos{})
	}
	b.Ret(r, Pos{})
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	return exe
}

//go:noinline
func nop3(a, b, c *tensor.Tensor) *tensor.Tensor { return a }

// BenchmarkCallInstruction compares one VM call instruction to a trivial
// builtin against a direct (non-inlined) Go call; ns/op is per call.
func BenchmarkCallInstruction(b *testing.B) {
	x := TensorValue(tensor.New(tensor.Float32, 4))
	b.Run("vm", func(b *testing.B) {
		vm := newVM(b, buildCalls(b), Options{})
		args := []Value{x, x, x}
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += callsPerRun {
			if _, _, err := vm.Call(ctx, "main", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go", func(b *testing.B) {
		t, _ := x.Tensor()
		fn := nop3
		b.ReportAllocs()
		var sink *tensor.Tensor
		for i := 0; i < b.N; i++ {
			sink = fn(t, t, t)
		}
		_ = sink
	})
}

// BenchmarkCallInstructionInterleaved alternates a VM run of callsPerRun
// calls with callsPerRun direct Go calls and reports the fastest of each
// per call: on a shared machine the minimum is the undisturbed cost.
func BenchmarkCallInstructionInterleaved(b *testing.B) {
	x := TensorValue(tensor.New(tensor.Float32, 4))
	vm := newVM(b, buildCalls(b), Options{})
	args := []Value{x, x, x}
	ctx := context.Background()
	t, _ := x.Tensor()
	fn := nop3
	var sink *tensor.Tensor
	var minVM, minGo time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, _, err := vm.Call(ctx, "main", args); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		for j := 0; j < callsPerRun; j++ {
			sink = fn(t, t, t)
		}
		t2 := time.Now()
		if d := t1.Sub(t0); i == 0 || d < minVM {
			minVM = d
		}
		if d := t2.Sub(t1); i == 0 || d < minGo {
			minGo = d
		}
	}
	_ = sink
	b.ReportMetric(float64(minVM.Nanoseconds())/callsPerRun, "vm-ns/call")
	b.ReportMetric(float64(minGo.Nanoseconds())/callsPerRun, "go-ns/call")
}

// TestCallInstructionAllocs: the steady state of the call loop allocates
// nothing (the Call's own bookkeeping included).
func TestCallInstructionAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop machines at random")
	}
	vm := newVM(t, buildCalls(t), Options{})
	x := TensorValue(tensor.New(tensor.Float32, 4))
	args := []Value{x, x, x}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(20, func() {
		if _, _, err := vm.Call(ctx, "main", args); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
