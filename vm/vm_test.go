package vm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

func init() {
	mustRegister(&Builtin{Name: "test.sub1", MinArgs: 1, MaxArgs: 1, Fn: func(_ *Machine, a []Value) (Value, error) {
		n, err := argInt(a, 0, "n")
		return Int(n - 1), err
	}})
	mustRegister(&Builtin{Name: "test.add", MinArgs: 2, MaxArgs: 2, Fn: func(_ *Machine, a []Value) (Value, error) {
		x, _ := a[0].Int()
		y, _ := a[1].Int()
		return Int(x + y), nil
	}})
	mustRegister(&Builtin{Name: "test.nop3", MinArgs: 3, MaxArgs: 3, Fn: func(_ *Machine, a []Value) (Value, error) {
		return a[0], nil
	}})
}

// addOneKernel is a Go kernel (B[i] = A[i] + 1 over float32) standing in
// for a compiled TIR kernel.
var addOneKernel = Kernel{Name: "add_one", TIR: []byte("go kernel"), Params: []abi.Param{
	{Kind: abi.ParamBuffer, DType: "float32", NDim: 1}, {Kind: abi.ParamBuffer, DType: "float32", NDim: 1}}}

func goKernels(k Kernel) (abi.Kernel, error) {
	switch k.Name {
	case "add_one":
		return goKernel(func(a []abi.Arg) error {
			if a[0].T == nil || a[1].T == nil || a[0].T.DType != tensor.Float32 || a[1].T.DType != tensor.Float32 {
				return fmt.Errorf("add_one takes two float32 tensors")
			}
			x, y := tensor.Data[float32](a[0].T), tensor.Data[float32](a[1].T)
			if len(x) != len(y) {
				return fmt.Errorf("length mismatch %d vs %d", len(x), len(y))
			}
			for i := range x {
				y[i] = x[i] + 1
			}
			return nil
		}), nil
	case "fill_n":
		return goKernel(func(a []abi.Arg) error {
			if a[0].T == nil || a[0].T.DType != tensor.Float32 {
				return fmt.Errorf("fill_n takes a float32 tensor")
			}
			y := tensor.Data[float32](a[0].T)
			for i := range y {
				y[i] = float32(a[1].I)
			}
			return nil
		}), nil
	}
	return nil, fmt.Errorf("no Go kernel %s", k.Name)
}

type goKernel func([]abi.Arg) error

func (g goKernel) Call(a []abi.Arg) error { return g(a) }

func pos(line int) Pos { return Pos{File: "t.tvms", Line: line, Col: 5} }

// buildAddOne: main(x: f32[n]) allocates y like x, runs add_one, reshapes y
// to (n, 1) and returns (y2, shape_of(x)).
func buildAddOne(t testing.TB) *Executable {
	b := NewBuilder()
	k := b.AddKernel(addOneKernel)
	b.BeginFunc("main", []string{"x"})
	shape, nbytes, st, y, y2, tup := b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg()
	b.CallPacked(RegVoid, "vm.builtin.check_tensor_info", []Arg{RegArg(0), ImmArg(1), ConstArg(b.Const(Constant{Kind: ConstDType, DType: "float32"})), ConstArg(b.Const(Constant{Kind: ConstString, Str: "ErrorContext(fn=main, loc=param[0], param=x)"}))}, pos(1))
	b.CallPacked(shape, "vm.builtin.shape_of", []Arg{RegArg(0)}, pos(2))
	b.CallPacked(nbytes, "test.nbytes", []Arg{RegArg(shape)}, pos(2))
	b.CallPacked(st, "vm.builtin.alloc_storage", []Arg{RegArg(RegVM), RegArg(nbytes), ImmArg(0), ConstArg(b.Const(Constant{Kind: ConstDType, DType: "uint8"})), ConstArg(b.Const(Constant{Kind: ConstString, Str: "global"}))}, pos(3))
	b.CallPacked(y, "vm.builtin.alloc_tensor", []Arg{RegArg(st), ImmArg(0), RegArg(shape), ConstArg(b.Const(Constant{Kind: ConstDType, DType: "float32"}))}, pos(4))
	b.CallPacked(st, "vm.builtin.null_value", nil, pos(5))
	b.Call(RegVoid, k, []Arg{RegArg(0), RegArg(y)}, pos(6))
	b.CallPacked(y2, "vm.builtin.reshape", []Arg{RegArg(y), RegArg(shape)}, pos(7))
	b.CallPacked(tup, "vm.builtin.make_tuple", []Arg{RegArg(y2), RegArg(shape)}, pos(8))
	b.Ret(tup, pos(9))
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	return exe
}

func init() {
	mustRegister(&Builtin{Name: "test.nbytes", MinArgs: 1, MaxArgs: 1, Fn: func(_ *Machine, a []Value) (Value, error) {
		s, err := argShape(a, 0, "shape")
		if err != nil {
			return Value{}, err
		}
		n := int64(4)
		for _, d := range s.Dims {
			n *= d
		}
		return ShapeValue(n), nil
	}})
}

func newVM(t testing.TB, exe *Executable, opts Options) *VM {
	if opts.CompileKernel == nil {
		opts.CompileKernel = goKernels
	}
	vm, err := New(exe, opts)
	require.NoError(t, err)
	return vm
}

func vecF32(xs ...float32) *tensor.Tensor {
	t := tensor.New(tensor.Float32, int64(len(xs)))
	copy(tensor.Data[float32](t), xs)
	return t
}

func TestRunAddOne(t *testing.T) {
	exe := buildAddOne(t)
	vm := newVM(t, exe, Options{})
	out, err := vm.Run(context.Background(), "main", vecF32(1, 2.5, -3))
	require.NoError(t, err)
	tup, ok := out.Tuple()
	require.True(t, ok)
	require.Len(t, tup.Fields, 2)
	y, ok := tup.Fields[0].Tensor()
	require.True(t, ok)
	assert.Equal(t, []int64{3}, y.Shape)
	assert.Equal(t, []float32{2, 3.5, -2}, tensor.Data[float32](y))
	s, ok := tup.Fields[1].Shape()
	require.True(t, ok)
	assert.Equal(t, []int64{3}, s.Dims)
}

func TestMarshalRoundTrip(t *testing.T) {
	exe := buildAddOne(t)
	exe.Constants = append(exe.Constants,
		Constant{Kind: ConstTensor, DType: "float32", Dims: []int64{2}, Data: []byte{0, 0, 128, 63, 0, 0, 0, 64}},
		Constant{Kind: ConstShape, Dims: []int64{-1, 3}},
		Constant{Kind: ConstInt, Int: -7},
		Constant{Kind: ConstFloat, Float: 0.25})
	exe.Funcs[exe.FuncIndex("main")].Sigs = []ParamSig{{Tensor: true, DType: "float32", NDim: 1, Dims: []string{"n"}, Annotation: `R.Tensor(("n",), dtype="float32")`}}
	data := exe.Marshal()
	got, err := Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, exe, got)
	assert.Equal(t, data, got.Marshal(), "re-encoding is byte-identical")
}

func TestDisassembly(t *testing.T) {
	text := buildAddOne(t).Text()
	for _, want := range []string{
		"@main(x) registers=7:",
		"call  vm.builtin.alloc_storage in: %vm, %2, i0, c[2], c[3] dst: %3",
		"call  add_one          in: %0, %4       dst: %void",
		"ret   %6",
		"; t.tvms:9:5",
		"@add_one num_inputs=2 kernel;",
		"c[0] = dtype float32",
		"add_one(buffer(float32, ndim=1), buffer(float32, ndim=1))",
	} {
		assert.Contains(t, text, want)
	}
}

func TestRuntimeErrorNamesLocation(t *testing.T) {
	vm := newVM(t, buildAddOne(t), Options{})
	_, err := vm.Run(context.Background(), "main", tensor.New(tensor.Float32, 2, 2))
	var re *RuntimeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "main", re.Func)
	assert.Equal(t, 0, re.Index)
	assert.Equal(t, pos(1), re.Pos)
	assert.Equal(t, `t.tvms:1:5: in main, instruction 0 (call  vm.builtin.check_tensor_info in: %0, i1, c[0], c[1] dst: %void): ValueError: ErrorContext(fn=main, loc=param[0], param=x) expect Tensor with ndim 1 but get 2`, err.Error())

	_, err = vm.Run(context.Background(), "main", tensor.New(tensor.Int32, 2))
	assert.ErrorContains(t, err, "expect Tensor with dtype float32 but get int32")
	_, err = vm.Run(context.Background(), "main", int64(3))
	assert.ErrorContains(t, err, "expect a Tensor but get int")
	_, err = vm.Run(context.Background(), "main")
	assert.EqualError(t, err, "main takes 1 arguments (x), got 0")
	_, err = vm.Run(context.Background(), "nope")
	assert.EqualError(t, err, `the executable has no function "nope"`)
}

// buildFib: fib(n) = n < 2 ? n : fib(n-1) + fib(n-2), with If, Goto, calls
// between VM functions and the branch-result copy codegen emits.
func buildFib(t testing.TB) *Executable {
	b := NewBuilder()
	mustRegisterOnce("test.lt2", func(_ *Machine, a []Value) (Value, error) {
		n, _ := a[0].Int()
		return Bool(n < 2), nil
	})
	b.BeginFunc("fib", []string{"n"})
	c, res, n1, f1, n2, f2 := b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg(), b.NewReg()
	b.CallPacked(c, "test.lt2", []Arg{RegArg(0)}, pos(1))
	jf := b.If(c, pos(1))
	b.CallPacked(res, "vm.builtin.copy", []Arg{RegArg(0)}, pos(2))
	jend := b.Goto(pos(2))
	b.PatchJump(jf)
	b.CallPacked(n1, "test.sub1", []Arg{RegArg(0)}, pos(3))
	b.Call(f1, b.FuncRef("fib"), []Arg{RegArg(n1)}, pos(3))
	b.CallPacked(n2, "test.sub1", []Arg{RegArg(n1)}, pos(4))
	b.Call(f2, b.FuncRef("fib"), []Arg{RegArg(n2)}, pos(4))
	b.CallPacked(res, "test.add", []Arg{RegArg(f1), RegArg(f2)}, pos(5))
	b.PatchJump(jend)
	b.Ret(res, pos(6))
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	return exe
}

var registerOnce sync.Map

func mustRegisterOnce(name string, fn BuiltinFunc) {
	if _, loaded := registerOnce.LoadOrStore(name, true); !loaded {
		mustRegister(&Builtin{Name: name, MinArgs: 1, MaxArgs: 1, Fn: fn})
	}
}

func fibGo(n int64) int64 {
	if n < 2 {
		return n
	}
	return fibGo(n-1) + fibGo(n-2)
}

func TestCallsAndBranches(t *testing.T) {
	vm := newVM(t, buildFib(t), Options{Stats: true})
	for n := int64(0); n <= 15; n++ {
		v, st, err := vm.Call(context.Background(), "fib", []Value{Int(n)})
		require.NoError(t, err)
		got, ok := v.Int()
		require.True(t, ok)
		assert.Equal(t, fibGo(n), got, "fib(%d)", n)
		require.Len(t, st.Funcs, 1)
		// fib(n) makes C(n) = 1 + C(n-1) + C(n-2) calls (C(0) = C(1) = 1).
		assert.Equal(t, fibCalls(n), st.Funcs[0].Calls)
	}
}

func fibCalls(n int64) int64 {
	if n < 2 {
		return 1
	}
	return 1 + fibCalls(n-1) + fibCalls(n-2)
}

func TestCancellationAndBudget(t *testing.T) {
	vm := newVM(t, buildFib(t), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := vm.Run(ctx, "fib", 60) // ~10^12 calls: only cancellation ends it
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)

	vm = newVM(t, buildFib(t), Options{MaxSteps: 1000})
	_, err = vm.Run(context.Background(), "fib", 60)
	assert.ErrorContains(t, err, "instruction budget of 1000 exhausted")

	vm = newVM(t, buildFib(t), Options{MaxCallDepth: 5})
	_, err = vm.Run(context.Background(), "fib", 10)
	assert.ErrorContains(t, err, "call depth exceeds 5")
}

func TestConcurrentCalls(t *testing.T) {
	vm := newVM(t, buildAddOne(t), Options{})
	fib := newVM(t, buildFib(t), Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				x := vecF32(float32(g), float32(i))
				out, err := vm.Run(context.Background(), "main", x)
				if err != nil {
					errs <- err
					return
				}
				tup, _ := out.Tuple()
				y, _ := tup.Fields[0].Tensor()
				if d := tensor.Data[float32](y); d[0] != float32(g)+1 || d[1] != float32(i)+1 {
					errs <- fmt.Errorf("goroutine %d run %d: got %v", g, i, d)
					return
				}
				if v, err := fib.Run(context.Background(), "fib", int64(g)); err != nil {
					errs <- err
					return
				} else if n, _ := v.Int(); n != fibGo(int64(g)) {
					errs <- fmt.Errorf("fib(%d) = %d", g, n)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// TestStorageReturnsToPool: storages a call allocates and does not return
// go back to the pool, so repeated calls reuse them.
func TestStorageReturnsToPool(t *testing.T) {
	b := NewBuilder()
	k := b.AddKernel(addOneKernel)
	b.BeginFunc("main", []string{"x"})
	st, tmp, out := b.NewReg(), b.NewReg(), b.NewReg()
	size := ConstArg(b.Const(Constant{Kind: ConstShape, Dims: []int64{16}}))
	shape := ConstArg(b.Const(Constant{Kind: ConstShape, Dims: []int64{4}}))
	f32 := ConstArg(b.Const(Constant{Kind: ConstDType, DType: "float32"}))
	u8 := ConstArg(b.Const(Constant{Kind: ConstDType, DType: "uint8"}))
	b.CallPacked(st, "vm.builtin.alloc_storage", []Arg{RegArg(RegVM), size, ImmArg(0), u8}, Pos{})
	b.CallPacked(tmp, "vm.builtin.alloc_tensor", []Arg{RegArg(st), ImmArg(0), shape, f32}, Pos{})
	b.Call(RegVoid, k, []Arg{RegArg(0), RegArg(tmp)}, Pos{})
	b.CallPacked(st, "vm.builtin.alloc_storage", []Arg{RegArg(RegVM), size, ImmArg(0), u8}, Pos{})
	b.CallPacked(out, "vm.builtin.alloc_tensor", []Arg{RegArg(st), ImmArg(0), shape, f32}, Pos{})
	b.Call(RegVoid, k, []Arg{RegArg(tmp), RegArg(out)}, Pos{})
	b.Ret(out, Pos{})
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	// One allocator shared by every machine: sync.Pool may drop machines
	// (it does at random under the race detector), the pool must persist.
	shared := tensor.NewPooledAllocator()
	vm := newVM(t, exe, Options{Stats: true, NewAllocator: func() tensor.Allocator { return shared }})
	for i := 0; i < 5; i++ {
		v, st, err := vm.Call(context.Background(), "main", []Value{TensorValue(vecF32(1, 2, 3, 4))})
		require.NoError(t, err)
		y, _ := v.Tensor()
		assert.Equal(t, []float32{3, 4, 5, 6}, tensor.Data[float32](y))
		// Per call: two allocations; the temporary is freed, the result escapes.
		assert.Equal(t, int64(2*(i+1)), st.Alloc.Allocs)
		assert.Equal(t, int64(i+1), st.Alloc.Frees)
		assert.Equal(t, int64(i), st.Alloc.Reuses)
	}
	// Results of earlier calls are never recycled by later ones.
	first, _, err := vm.Call(context.Background(), "main", []Value{TensorValue(vecF32(10, 20, 30, 40))})
	require.NoError(t, err)
	second, _, err := vm.Call(context.Background(), "main", []Value{TensorValue(vecF32(0, 0, 0, 0))})
	require.NoError(t, err)
	f, _ := first.Tensor()
	g, _ := second.Tensor()
	require.NotSame(t, f, g)
	require.NotSame(t, f.Storage, g.Storage)
	assert.Equal(t, []float32{12, 22, 32, 42}, tensor.Data[float32](f))
	assert.Equal(t, []float32{2, 2, 2, 2}, tensor.Data[float32](g))
	if raceEnabled {
		return // sync.Pool drops machines at random under the race detector
	}
	// Steady state: only the escaping result allocates (its storage
	// object and bytes, its tensor header and shape); the temporary's
	// storage, header and shape are recycled.
	x := []Value{TensorValue(vecF32(1, 2, 3, 4))}
	quiet := newVM(t, exe, Options{})
	allocs := testing.AllocsPerRun(50, func() {
		if _, _, err := quiet.Call(context.Background(), "main", x); err != nil {
			require.Failf(t, "call failed", "%v", err)
		}
	})
	assert.LessOrEqual(t, allocs, 4.0)

	// Released results go back to the pool: the next call reuses their
	// storage, and a release loop allocates only the result's header.
	v, _, err := vm.Call(context.Background(), "main", x)
	require.NoError(t, err)
	before := shared.Stats()
	require.Equal(t, 1, vm.Release(TupleValue(v, v, x[0])), "the result once; the caller's argument is not the VM's")
	require.Equal(t, 0, vm.Release(v), "a storage goes back once")
	v2, _, err := vm.Call(context.Background(), "main", []Value{TensorValue(vecF32(5, 6, 7, 8))})
	require.NoError(t, err)
	y2, _ := v2.Tensor()
	after := shared.Stats()
	// Reuses + 2 of Allocs + 2: no fresh memory.
	assert.Equal(t, before.Reuses+2, after.Reuses, "both of the call's storages come from the pool (the last call's temporary and the released result)")
	assert.Equal(t, before.Allocs+2, after.Allocs)
	assert.Equal(t, []float32{7, 8, 9, 10}, tensor.Data[float32](y2))
	arg, _ := x[0].Tensor()
	assert.Equal(t, []float32{1, 2, 3, 4}, tensor.Data[float32](arg), "the argument is untouched")
	released := testing.AllocsPerRun(50, func() {
		r, _, err := quiet.Call(context.Background(), "main", x)
		if err != nil {
			require.Failf(t, "call failed", "%v", err)
		}
		quiet.Release(r)
	})
	assert.Less(t, released, allocs, "releasing the result saves its storage's allocations")
}

func TestClosures(t *testing.T) {
	// adder(x, captured) = x + captured; main(a, b) = invoke(make_closure(adder, b), a)
	b := NewBuilder()
	b.BeginFunc("adder", []string{"x", "c"})
	r := b.NewReg()
	b.CallPacked(r, "test.add", []Arg{RegArg(0), RegArg(1)}, Pos{})
	b.Ret(r, Pos{})
	b.EndFunc()
	b.BeginFunc("main", []string{"a", "b"})
	clo, res := b.NewReg(), b.NewReg()
	b.CallPacked(clo, "vm.builtin.make_closure", []Arg{FuncArg(b.FuncRef("adder")), RegArg(1)}, Pos{})
	b.CallPacked(RegVoid, "vm.builtin.check_func_info", []Arg{RegArg(clo)}, Pos{})
	b.CallPacked(res, "vm.builtin.invoke_closure", []Arg{RegArg(RegVM), RegArg(clo), RegArg(0)}, Pos{})
	b.Ret(res, Pos{})
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	vm := newVM(t, exe, Options{})
	v, err := vm.Run(context.Background(), "main", 40, 2)
	require.NoError(t, err)
	n, _ := v.Int()
	assert.Equal(t, int64(42), n)
}

func TestShapeHeapBuiltins(t *testing.T) {
	// main(x: (n, 2n)): store n, compute 2n through make_shape, check x.
	b := NewBuilder()
	b.BeginFunc("main", []string{"x"})
	heap, s := b.NewReg(), b.NewReg()
	ctx := ConstArg(b.Const(Constant{Kind: ConstString, Str: "ErrorContext(fn=main, loc=param[0], param=x) "}))
	b.CallPacked(heap, "vm.builtin.alloc_shape_heap", []Arg{RegArg(RegVM), ImmArg(2)}, pos(1))
	b.CallPacked(RegVoid, "vm.builtin.match_shape", []Arg{RegArg(0), RegArg(heap), ImmArg(2), ImmArg(int64(abi.MatchStoreToHeap)), ImmArg(0), ImmArg(int64(abi.MatchStoreToHeap)), ImmArg(1), ctx}, pos(2))
	b.CallPacked(s, "vm.builtin.make_shape", []Arg{RegArg(heap), ImmArg(3), ImmArg(int64(abi.MakeLoadShape)), ImmArg(1), ImmArg(int64(abi.MakeUseImm)), ImmArg(7), ImmArg(int64(abi.MakeLoadShape)), ImmArg(0)}, pos(3))
	b.CallPacked(RegVoid, "vm.builtin.match_shape", []Arg{RegArg(s), RegArg(heap), ImmArg(3), ImmArg(int64(abi.MatchAssertEqualToLoad)), ImmArg(1), ImmArg(int64(abi.MatchAssertEqualToImm)), ImmArg(7), ImmArg(int64(abi.MatchAssertEqualToLoad)), ImmArg(0), ctx}, pos(4))
	b.Ret(s, pos(5))
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	vm := newVM(t, exe, Options{})
	v, err := vm.Run(context.Background(), "main", tensor.New(tensor.Float32, 3, 5))
	require.NoError(t, err)
	sh, _ := v.Shape()
	assert.Equal(t, []int64{5, 7, 3}, sh.Dims)
	_, err = vm.Run(context.Background(), "main", tensor.New(tensor.Float32, 3))
	assert.ErrorContains(t, err, "t.tvms:2:5: in main, instruction 1")
	assert.ErrorContains(t, err, "ErrorContext(fn=main, loc=param[0], param=x) match_cast shape size mismatch (expected ndim 2, got 1).")

	// Direct checks of the codes against hand-derived results.
	h := TensorValue(tensor.New(tensor.Int64, 2))
	_, err = matchShape(nil, []Value{ShapeValue(4, 5), h, Int(2), Int(int64(abi.MatchStoreToHeap)), Int(0), Int(int64(abi.MatchAssertEqualToImm)), Int(6), String("ctx")})
	assert.EqualError(t, err, "ctx match_cast error, shape[1] mismatch to specified constant (expected 6, got 5).")
	_, err = matchShape(nil, []Value{ShapeValue(4, 5), h, Int(2), Int(int64(abi.MatchAssertEqualToLoad)), Int(0), Int(int64(abi.MatchAssertEqualToLoad)), Int(0)})
	assert.EqualError(t, err, "match_cast error, shape[1] mismatch to a previous populated value (expected 4, got 5).")
	_, err = matchShape(nil, []Value{ShapeValue(4), h, Int(1), Int(int64(abi.MatchStoreToHeap)), Int(9)})
	assert.EqualError(t, err, "shape heap slot 9 out of range (heap of 2 slots)")
	v, err = makePrimValue(nil, []Value{h, Int(int64(abi.MakeLoadShape)), Int(0)})
	require.NoError(t, err)
	n, _ := v.Int()
	assert.Equal(t, int64(4), n)
	_, err = matchPrimValue(nil, []Value{Int(5), h, Int(int64(abi.MatchAssertEqualToLoad)), Int(0), String("pv")})
	assert.EqualError(t, err, "pv match_cast error, PrimValue mismatch to a previous populated value (expected 4, got 5).")
}

func TestCheckInfoMessages(t *testing.T) {
	tup := TupleValue(Int(1))
	for _, c := range []struct {
		fn   BuiltinFunc
		args []Value
		want string
	}{
		{checkShapeInfo, []Value{TensorValue(vecF32(1)), Int(1), String("E")}, "TypeError: E expect a Shape but get runtime.NDArray"},
		{checkShapeInfo, []Value{ShapeValue(1, 2), Int(1), String("E")}, "ValueError: E expect Shape with ndim 1 but get 2"},
		{checkTupleInfo, []Value{tup, Int(2), String("E")}, "ValueError: E expect a Tuple with 2 elements, but get a Tuple with 1 elements."},
		{checkTupleInfo, []Value{Int(1), Int(2)}, "TypeError: expect a Tuple but get int"},
		{checkPrimValueInfo, []Value{Float(1.5), DTypeValue(tensor.Int64), String("E")}, "TypeError: E expect prim value of dtype int64 but get float"},
		{checkFuncInfo, []Value{Int(1), String("E")}, "TypeError: E expect a Function but get int"},
		{tupleGetItem, []Value{tup, Int(3)}, "tuple index 3 out of range for a tuple of 1 fields"},
		{reshape, []Value{TensorValue(vecF32(1, 2, 3)), ShapeValue(2, 2)}, "cannot reshape a tensor of shape [3] (3 elements) to [2, 2]"},
		{assertBuiltin, []Value{Bool(false), String("x must be positive")}, "x must be positive"},
	} {
		_, err := c.fn(nil, c.args)
		assert.EqualError(t, err, c.want)
	}
	for _, ok := range [][]Value{
		{Int(3), DTypeValue(tensor.Float32)}, {Bool(true), DTypeValue(tensor.Bool)}, {Int(3), DTypeValue(tensor.Int32)},
	} {
		_, err := checkPrimValueInfo(nil, ok)
		assert.NoError(t, err)
	}
}

func TestPanicInBuiltinIsAnError(t *testing.T) {
	mustRegisterOnce("test.panics", func(*Machine, []Value) (Value, error) { panic("boom") })
	b := NewBuilder()
	b.BeginFunc("main", []string{"x"})
	b.CallPacked(0, "test.panics", []Arg{RegArg(0)}, pos(3))
	b.Ret(0, Pos{})
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	_, err = newVM(t, exe, Options{}).Run(context.Background(), "main", 1)
	var re *RuntimeError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, pos(3), re.Pos)
	assert.Contains(t, err.Error(), "internal error: panic: boom")
}

func TestValidationRejects(t *testing.T) {
	mutate := func(f func(e *Executable)) error {
		e := buildAddOne(t)
		f(e)
		return e.Validate()
	}
	for _, c := range []struct {
		name string
		mut  func(e *Executable)
		want string
	}{
		{"register", func(e *Executable) { e.Code[1].Args[0] = RegArg(99) }, "argument 0 register 99 out of range [0, 7)"},
		{"unwritten", func(e *Executable) { e.Funcs[e.FuncIndex("main")].NumRegs++; e.Code[1].Args[0] = RegArg(7) }, "register %7 is read but never written"},
		{"dst", func(e *Executable) { e.Code[1].Dst = -3 }, "destination register -3 out of range"},
		{"const", func(e *Executable) { e.Code[0].Args[2] = ConstArg(50) }, "constant index 50 out of range [0, 4)"},
		{"func", func(e *Executable) { e.Code[0].Func = 77 }, "function index 77 out of range"},
		{"arity", func(e *Executable) { e.Code[1].Args = nil }, "vm.builtin.shape_of takes 1 arguments, got 0"},
		{"ctx", func(e *Executable) { e.Code[3].Args[0] = ImmArg(0) }, "takes the VM context (%vm) as its first argument"},
		{"vm misuse", func(e *Executable) { e.Code[1].Args[0] = RegArg(RegVM) }, "%vm passed as argument 0 to vm.builtin.shape_of"},
		{"kernel arity", func(e *Executable) { e.Code[6].Args = e.Code[6].Args[:1] }, "kernel add_one takes 2 arguments, got 1"},
		{"kernel kind", func(e *Executable) { e.Code[6].Args[0] = ImmArg(3) }, "kernel add_one argument 0 does not fit its buffer parameter"},
		{"falls off", func(e *Executable) {
			e.Funcs[e.FuncIndex("main")].End--
			e.Code, e.Pos = e.Code[:len(e.Code)-1], e.Pos[:len(e.Pos)-1]
		}, "ends without ret or goto"},
		{"range", func(e *Executable) { e.Funcs[e.FuncIndex("main")].End = 100 }, "code range [0, 100) is outside"},
		{"unknown builtin", func(e *Executable) { e.Funcs[e.FuncIndex("test.nbytes")].Name = "no.such" }, `function "no.such": no builtin of that name is registered`},
		{"constant bytes", func(e *Executable) {
			e.Constants = append(e.Constants, Constant{Kind: ConstTensor, DType: "float32", Dims: []int64{3}, Data: make([]byte, 8)})
		}, "tensor float32[3] needs 12 bytes, has 8"},
		{"dtype", func(e *Executable) { e.Constants[0].DType = "float33" }, "float33"},
		{"kernel dtype", func(e *Executable) { e.Kernels[0].Params[0].DType = "q8" }, `kernel "add_one" parameter 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := mutate(c.mut)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestJumpValidation(t *testing.T) {
	for _, off := range []int64{0, -1, 100} {
		e := buildFib(t)
		e.Code[1].Offset = off
		err := e.Validate()
		require.Error(t, err, "offset %d", off)
		assert.Contains(t, err.Error(), "jump offset")
	}
}

func TestUnmarshalRejectsCorruption(t *testing.T) {
	data := buildAddOne(t).Marshal()
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than the 24-byte header"},
		{"magic", append([]byte("XHASECVM"), data[8:]...), "bad magic"},
		{"version", func() []byte { d := clone(data); d[8] = 9; return d }(), "format version 9"},
		{"truncated", data[:len(data)-3], "payload length"},
		{"extended", append(clone(data), 0), "payload length"},
		{"checksum", func() []byte { d := clone(data); d[len(d)-1] ^= 1; return d }(), "checksum mismatch"},
	} {
		_, err := Unmarshal(c.data)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// TestSectionErrorsAfterChecksum: a payload that is corrupt but carries a
// correct checksum is still rejected by the section decoder.
func TestSectionErrorsAfterChecksum(t *testing.T) {
	data := buildAddOne(t).Marshal()
	payload := clone(data[headerSize:])
	payload[0] = 7 // first section id
	_, err := Unmarshal(reseal(payload))
	assert.ErrorContains(t, err, "section id 7, want 1")
	payload = clone(data[headerSize:])
	payload = payload[:len(payload)-3-2] // the empty external section (3 bytes), and 2 of the source map
	_, err = Unmarshal(reseal(payload))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "source map") || strings.Contains(err.Error(), "exceeds"), err.Error())
}

// reseal wraps a payload in a header with a correct length and checksum.
func reseal(payload []byte) []byte {
	e := &Executable{}
	out := e.Marshal()[:headerSize]
	out = out[:12]
	out = appendU64(out, uint64(len(payload)))
	out = appendU32(out, crc32c(payload))
	return append(out, payload...)
}

func TestDebugBuiltins(t *testing.T) {
	var out strings.Builder
	b := NewBuilder()
	b.BeginFunc("main", []string{"x", "n"})
	b.CallPacked(RegVoid, "relax.run.print", []Arg{ConstArg(b.Const(Constant{Kind: ConstString, Str: "x = {}, n = {}"})), RegArg(0), RegArg(1)}, pos(1))
	b.CallPacked(RegVoid, "relax.run.assert_op", []Arg{RegArg(1), ConstArg(b.Const(Constant{Kind: ConstString, Str: "n must be nonzero, got {}"})), RegArg(1)}, pos(2))
	b.Ret(0, pos(3))
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	vm := newVM(t, exe, Options{Stdout: &out})
	_, err = vm.Run(context.Background(), "main", vecF32(1.5, -2), 3)
	require.NoError(t, err)
	assert.Equal(t, "x = [1.5 -2], n = 3\n", out.String())
	_, err = vm.Run(context.Background(), "main", vecF32(1), 0)
	assert.EqualError(t, err, "t.tvms:2:5: in main, instruction 1 (call  relax.run.assert_op in: %1, c[1], %1 dst: %void): n must be nonzero, got 0")
}

func TestStatsAdd(t *testing.T) {
	a := &Stats{Instructions: 10, Storages: 1, StorageBytes: 64,
		Funcs:   []FuncStats{{Name: "main", Calls: 1, Instructions: 10, Time: 5}},
		Kernels: []KernelStats{{Name: "k", Calls: 2, Time: 3}}}
	b := &Stats{Instructions: 7, Storages: 2, StorageBytes: 32,
		Funcs:   []FuncStats{{Name: "main", Calls: 1, Instructions: 4, Time: 1}, {Name: "g", Calls: 3, Instructions: 3, Time: 2}},
		Kernels: []KernelStats{{Name: "k", Calls: 1, Time: 4}}}
	a.Add(b)
	assert.Equal(t, int64(17), a.Instructions)
	assert.Equal(t, int64(3), a.Storages)
	assert.Equal(t, int64(96), a.StorageBytes)
	assert.Equal(t, []FuncStats{{Name: "main", Calls: 2, Instructions: 14, Time: 6}, {Name: "g", Calls: 3, Instructions: 3, Time: 2}}, a.Funcs)
	assert.Equal(t, []KernelStats{{Name: "k", Calls: 3, Time: 7}}, a.Kernels)
}

// TestShapeHeapNeverShared: a second heap in one call, and a heap that is
// returned, are never handed out again while still reachable.
func TestShapeHeapNeverShared(t *testing.T) {
	b := NewBuilder()
	b.BeginFunc("main", []string{"x"})
	h1, h2, tup := b.NewReg(), b.NewReg(), b.NewReg()
	b.CallPacked(h1, "vm.builtin.alloc_shape_heap", []Arg{RegArg(RegVM), ImmArg(1)}, Pos{})
	b.CallPacked(RegVoid, "vm.builtin.match_shape", []Arg{RegArg(0), RegArg(h1), ImmArg(1), ImmArg(int64(abi.MatchStoreToHeap)), ImmArg(0)}, Pos{})
	b.CallPacked(h2, "vm.builtin.alloc_shape_heap", []Arg{RegArg(RegVM), ImmArg(1)}, Pos{})
	b.CallPacked(tup, "vm.builtin.make_tuple", []Arg{RegArg(h1), RegArg(h2)}, Pos{})
	b.Ret(tup, Pos{})
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	vm := newVM(t, exe, Options{})
	first, err := vm.Run(context.Background(), "main", vecF32(1, 2, 3))
	require.NoError(t, err)
	second, err := vm.Run(context.Background(), "main", vecF32(1, 2, 3, 4, 5))
	require.NoError(t, err)
	f, _ := first.Tuple()
	s, _ := second.Tuple()
	fh1, _ := f.Fields[0].Tensor()
	fh2, _ := f.Fields[1].Tensor()
	sh1, _ := s.Fields[0].Tensor()
	require.NotSame(t, fh1, fh2)
	require.NotSame(t, fh1, sh1)
	assert.Equal(t, []int64{3}, tensor.Data[int64](fh1))
	assert.Equal(t, []int64{5}, tensor.Data[int64](sh1))
	assert.Equal(t, []int64{0}, tensor.Data[int64](fh2))
}

// TestConstantsAreFrozen: linking an executable freezes its constant
// tensors (kernels refuse to write them and may keep values derived from
// them, such as packed weights).
func TestConstantsAreFrozen(t *testing.T) {
	b := NewBuilder()
	b.BeginFunc("main", nil)
	r := b.NewReg()
	c := b.Const(Constant{Kind: ConstTensor, DType: "float32", Dims: []int64{1}, Data: []byte{0, 0, 128, 63}})
	b.CallPacked(r, "vm.builtin.copy", []Arg{ConstArg(c)}, pos(1))
	b.Ret(r, pos(2))
	b.EndFunc()
	exe, err := b.Finish()
	require.NoError(t, err)
	out, err := newVM(t, exe, Options{}).Run(context.Background(), "main")
	require.NoError(t, err)
	got, ok := out.Tensor()
	require.True(t, ok)
	require.Equal(t, []float32{1}, tensor.Data[float32](got))
	require.True(t, got.Storage.Frozen())
}
