package vm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

const callsPerRun = 1000

// buildCalls: main(a, b, c) runs callsPerRun calls of the trivial builtin
// test.nop3(%a, %b, %c) (three register arguments, like a kernel call),
// then returns.
func buildCalls(t testing.TB) *Executable { return buildCallsTo(t, "test.nop3", 3) }

// buildCallsTo is buildCalls for another builtin taking nargs registers.
func buildCallsTo(t testing.TB, builtin string, nargs int) *Executable {
	b := NewBuilder()
	b.BeginFunc("main", []string{"a", "b", "c"})
	r := b.NewReg()
	for i := 0; i < callsPerRun; i++ {
		args := []Arg{RegArg(0), RegArg(1), RegArg(2)}[:nargs]
		b.CallPacked(r, builtin, args, Pos{})
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
			require.Failf(t, "call failed", "%v", err)
		}
	})
	require.Zero(t, allocs)
}

// wordInterpreter runs an executable's code as TVM's RunLoop does: each
// Call decodes its argument words (register / immediate / constant /
// function) and looks its callee up in the function table on every
// execution. It is the baseline for the linked execution form (New), and
// handles only what buildCalls emits.
type wordInterpreter struct {
	exe    *Executable
	table  []*Builtin
	consts []Value
	regs   []Value
	args   []Value
}

func newWordInterpreter(exe *Executable) *wordInterpreter {
	w := &wordInterpreter{exe: exe, table: make([]*Builtin, len(exe.Funcs)), args: make([]Value, 0, 8)}
	for i, f := range exe.Funcs {
		if f.Kind == FuncPacked {
			w.table[i] = LookupBuiltin(f.Name)
		}
	}
	for i := range exe.Constants {
		v, _ := exe.Constants[i].value()
		w.consts = append(w.consts, v)
	}
	return w
}

func (w *wordInterpreter) run(fi int, in []Value) (Value, error) {
	f := &w.exe.Funcs[fi]
	if cap(w.regs) < f.NumRegs {
		w.regs = make([]Value, f.NumRegs)
	}
	regs := w.regs[:f.NumRegs]
	copy(regs, in)
	for pc := f.Start; ; {
		ins := &w.exe.Code[pc]
		switch ins.Op {
		case OpCall:
			args := w.args[:0]
			for _, a := range ins.Args {
				switch a.Kind() {
				case ArgRegister:
					if r := a.Value(); r < RegVoid {
						args = append(args, regs[r])
					} else {
						args = append(args, Value{})
					}
				case ArgImmediate:
					args = append(args, Int(a.Value()))
				case ArgConstIdx:
					args = append(args, w.consts[a.Value()])
				}
			}
			w.args = args
			b := w.table[ins.Func]
			v, err := b.Fn(nil, args)
			if err != nil {
				return Value{}, err
			}
			if ins.Dst != RegVoid {
				regs[ins.Dst] = v
			}
			pc++
		case OpRet:
			return regs[ins.Reg], nil
		case OpGoto:
			pc += int(ins.Offset)
		case OpIf:
			if regs[ins.Reg].i != 0 {
				pc++
			} else {
				pc += int(ins.Offset)
			}
		}
	}
}

// BenchmarkDispatch compares the linked execution form with interpreting
// TVM's instruction words directly, on the call-instruction program,
// interleaved; the metrics are the fastest run of each per call.
func BenchmarkDispatch(b *testing.B) {
	b.Run("builtin", func(b *testing.B) { benchDispatch(b, buildCalls(b)) })
	// vm.builtin.copy (codegen's var-to-var bindings and If results):
	// linked as a register move.
	b.Run("copy", func(b *testing.B) { benchDispatch(b, buildCallsTo(b, "vm.builtin.copy", 1)) })
}

func benchDispatch(b *testing.B, exe *Executable) {
	x := TensorValue(tensor.New(tensor.Float32, 4))
	args := []Value{x, x, x}
	linked := newVM(b, exe, Options{})
	words := newWordInterpreter(exe)
	ctx := context.Background()
	var minLinked, minWords time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, _, err := linked.Call(ctx, "main", args); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := words.run(exe.FuncIndex("main"), args); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if d := t1.Sub(t0); i == 0 || d < minLinked {
			minLinked = d
		}
		if d := t2.Sub(t1); i == 0 || d < minWords {
			minWords = d
		}
	}
	b.ReportMetric(float64(minLinked.Nanoseconds())/callsPerRun, "linked-ns/call")
	b.ReportMetric(float64(minWords.Nanoseconds())/callsPerRun, "words-ns/call")
}
