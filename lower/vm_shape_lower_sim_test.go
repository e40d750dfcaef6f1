package lower_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm/abi"
)

// The simulation below runs a VMShapeLower output the way the VM's shape
// builtins behave (src/runtime/relax_vm/builtin.cc): it is the independent
// check that the heap slots, the match codes and the generated shape_func
// compute what the input's symbolic shapes mean. Expected results come from
// evaluating the input module's own expressions with the chosen values of
// the symbolic variables, never from the lowered code.

// simValue is a run-time value: a tensor (shape and dtype), a shape, an
// int64, a tuple or an opaque object.
type simValue struct {
	kind  string // "tensor", "shape", "prim", "tuple", "object"
	shape []int64
	dtype string
	prim  int64
	tuple []simValue
}

func tensorOf(dtype string, shape ...int64) simValue {
	return simValue{kind: "tensor", dtype: dtype, shape: shape}
}

// simulate runs fn of the lowered module on args and returns its result,
// or the error a check raises.
func simulate(mod *ir.Module, fn string, args ...simValue) (simValue, error) {
	v, _, err := simulateTrace(mod, fn, args...)
	return v, err
}

// simulateTrace is simulate that also returns the value of every binding
// of the function's top-level blocks.
func simulateTrace(mod *ir.Module, fn string, args ...simValue) (simValue, map[*ir.Var]simValue, error) {
	f := mod.Func(fn)
	env := map[*ir.Var]simValue{}
	for i, p := range f.Params {
		env[p] = args[i]
	}
	var heap []int64
	eval := func(e ir.Expr) simValue {
		switch e := e.(type) {
		case *ir.Var:
			return env[e]
		case *ir.PrimValue:
			v, _ := ir.IntValue(e.Value)
			return simValue{kind: "prim", prim: v}
		case *ir.ShapeExpr:
			s := make([]int64, len(e.Values))
			for i, d := range e.Values {
				s[i], _ = ir.IntValue(d)
			}
			return simValue{kind: "shape", shape: s}
		}
		return simValue{kind: "object"}
	}
	imm := func(e ir.Expr) int64 { return eval(e).prim }
	seq := f.Body.(*ir.SeqExpr)
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			var val ir.Expr
			switch bd := bind.(type) {
			case *ir.MatchCast:
				env[bd.Var] = eval(bd.Value) // checked by the calls before it
				continue
			case *ir.VarBinding:
				val = bd.Value
			}
			var out simValue
			switch v := val.(type) {
			case *ir.TupleGetItem:
				out = eval(v.Tuple).tuple[v.Index]
			case *ir.Call:
				var err error
				out, err = simCall(mod, v, eval, imm, &heap)
				if err != nil {
					return simValue{}, nil, err
				}
			default:
				out = eval(val)
			}
			env[bind.BoundVar()] = out
		}
	}
	return eval(seq.Body), env, nil
}

func simCall(mod *ir.Module, c *ir.Call, eval func(ir.Expr) simValue, imm func(ir.Expr) int64, heap *[]int64) (simValue, error) {
	args := c.Args
	switch callee := c.Op.(type) {
	case *ir.GlobalVar: // a generated shape_func(H), or a kernel
		pf := mod.PrimFunc(callee.Name)
		if pf == nil {
			return simValue{}, fmt.Errorf("call of %s", callee.Name)
		}
		if ev, ok := pf.Body.(*ir.Evaluate); ok { // compute_symbolic_expr(scalars...): T.ret(expr)
			ret, ok := ev.Value.(*ir.PrimCall)
			if !ok || ret.Op != "ret" { // a kernel: not simulated
				return simValue{kind: "object"}, nil
			}
			vars := map[*ir.PrimVar]int64{}
			for i, p := range pf.Params {
				vars[p] = eval(args[i]).prim
			}
			return simValue{kind: "prim", prim: evalPrim(ret.Args[0], nil, vars)}, nil
		}
		stmts := []ir.Stmt{pf.Body}
		if s, ok := pf.Body.(*ir.SeqStmt); ok {
			stmts = s.Stmts
		}
		for _, st := range stmts {
			bs, ok := st.(*ir.BufferStore)
			if !ok { // a kernel: not simulated
				break
			}
			i, _ := ir.IntValue(bs.Indices[0])
			(*heap)[i] = evalPrim(bs.Value, func(b *ir.BufferLoad) int64 {
				j, _ := ir.IntValue(b.Indices[0])
				return (*heap)[j]
			}, nil)
		}
		return simValue{kind: "object"}, nil
	case *ir.Op:
		switch callee {
		case op.NullValue:
			*heap = nil
			return simValue{kind: "object"}, nil
		case op.CallBuiltinWithCtx: // alloc_shape_heap(n)
			*heap = make([]int64, imm(args[1].(*ir.Tuple).Fields[0]))
			return simValue{kind: "object"}, nil
		case op.VMAllocTensor:
			return simValue{kind: "tensor", shape: eval(args[2]).shape, dtype: args[3].(*ir.DataTypeImm).Value.String()}, nil
		}
		return simValue{kind: "object"}, nil
	case *ir.ExternFunc:
		switch callee.Symbol {
		case "vm.builtin.check_tensor_info":
			v, ndim, dt := eval(args[0]), imm(args[1]), args[2].(*ir.DataTypeImm).Value
			if v.kind != "tensor" || ndim != -1 && int64(len(v.shape)) != ndim || !dt.IsVoid() && dt.String() != v.dtype {
				return simValue{}, fmt.Errorf("check_tensor_info: %v is not a %d-d %v tensor", v, ndim, dt)
			}
		case "vm.builtin.check_shape_info":
			v, ndim := eval(args[0]), imm(args[1])
			if v.kind != "shape" || ndim != -1 && int64(len(v.shape)) != ndim {
				return simValue{}, fmt.Errorf("check_shape_info: %v", v)
			}
		case "vm.builtin.check_prim_value_info":
			if eval(args[0]).kind != "prim" {
				return simValue{}, fmt.Errorf("check_prim_value_info")
			}
		case "vm.builtin.check_tuple_info":
			v := eval(args[0])
			if v.kind != "tuple" || int64(len(v.tuple)) != imm(args[1]) {
				return simValue{}, fmt.Errorf("check_tuple_info")
			}
		case "vm.builtin.tuple_getitem":
			return eval(args[0]).tuple[imm(args[1])], nil
		case "vm.builtin.match_shape", "vm.builtin.match_prim_value":
			v := eval(args[0])
			dims, rest := v.shape, args[3:]
			if callee.Symbol == "vm.builtin.match_prim_value" {
				dims, rest = []int64{v.prim}, args[2:]
			} else if int64(len(dims)) != imm(args[2]) {
				return simValue{}, fmt.Errorf("match_shape: rank %d", len(dims))
			}
			for i, d := range dims {
				code, x := imm(rest[2*i]), imm(rest[2*i+1])
				switch abi.MatchCode(code) {
				case abi.MatchAssertEqualToImm:
					if d != x {
						return simValue{}, fmt.Errorf("match: shape[%d] = %d, not %d", i, d, x)
					}
				case abi.MatchStoreToHeap:
					(*heap)[x] = d
				case abi.MatchAssertEqualToLoad:
					if d != (*heap)[x] {
						return simValue{}, fmt.Errorf("match: shape[%d] = %d, not heap[%d] = %d", i, d, x, (*heap)[x])
					}
				}
			}
		case "vm.builtin.make_shape":
			n := imm(args[1])
			s := make([]int64, n)
			for i := range s {
				code, x := imm(args[2+2*i]), imm(args[3+2*i])
				s[i] = x
				if abi.MakeCode(code) == abi.MakeLoadShape {
					s[i] = (*heap)[x]
				}
			}
			return simValue{kind: "shape", shape: s}, nil
		case "vm.builtin.make_prim_value":
			code, x := imm(args[1]), imm(args[2])
			if abi.MakeCode(code) == abi.MakeLoadShape {
				x = (*heap)[x]
			}
			return simValue{kind: "prim", prim: x}, nil
		case "my.f": // the test modules' opaque function: the identity on its first argument
			return eval(args[0]), nil
		}
		return simValue{kind: "object"}, nil
	}
	return simValue{kind: "object"}, nil
}

// evalPrim evaluates a shape expression: variables through vars, heap
// loads through load.
func evalPrim(e ir.PrimExpr, load func(*ir.BufferLoad) int64, vars map[*ir.PrimVar]int64) int64 {
	switch e := e.(type) {
	case *ir.IntImm:
		return e.Value
	case *ir.PrimVar:
		return vars[e]
	case *ir.BufferLoad:
		return load(e)
	case *ir.Binary:
		a, b := evalPrim(e.A, load, vars), evalPrim(e.B, load, vars)
		switch e.Op {
		case ir.OpAdd:
			return a + b
		case ir.OpSub:
			return a - b
		case ir.OpMul:
			return a * b
		case ir.OpFloorDiv:
			q := a / b
			if (a%b != 0) && (a < 0) != (b < 0) {
				q--
			}
			return q
		case ir.OpMin:
			return min(a, b)
		case ir.OpMax:
			return max(a, b)
		}
	}
	panic(fmt.Sprintf("evalPrim: %T %v", e, e))
}

// symVars returns the input function's symbolic variables by name.
func symVars(f *ir.Function) map[string]*ir.PrimVar {
	out := map[string]*ir.PrimVar{}
	var add func(s ir.StructInfo)
	add = func(s ir.StructInfo) {
		switch s := s.(type) {
		case *ir.TensorInfo:
			if dims, ok := s.Dims(); ok {
				for _, d := range dims {
					for _, v := range ir.PrimVarsIn(d) {
						out[v.Name] = v
					}
				}
			}
		case *ir.ShapeInfo:
			for _, d := range s.Values {
				for _, v := range ir.PrimVarsIn(d) {
					out[v.Name] = v
				}
			}
		case *ir.PrimInfo:
			if s.Value != nil {
				for _, v := range ir.PrimVarsIn(s.Value) {
					out[v.Name] = v
				}
			}
		case *ir.TupleInfo:
			for _, f := range s.Fields {
				add(f)
			}
		}
	}
	for _, p := range f.Params {
		add(p.StructInfo())
	}
	for _, blk := range f.Body.(*ir.SeqExpr).Blocks {
		for _, b := range blk.Bindings {
			if mc, ok := b.(*ir.MatchCast); ok {
				add(mc.SInfo)
			}
		}
	}
	return out
}

func TestVMShapeLowerSimulated(t *testing.T) {
	load := func(path string) *ir.Module {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		mod, errs := syntax.Parse(path, src)
		require.Empty(t, errs)
		return mod
	}
	dir := "../testdata/passes/VMShapeLower/"

	t.Run("symbolic", func(t *testing.T) {
		in := load(dir + "symbolic.tvms")
		out, _, errs := lower.LowerShapes(in, true)
		require.Empty(t, errs)
		vars := symVars(in.Func("main"))
		for _, c := range []struct {
			n, m, k int64
			ydims   []int64 // nil: (k, m, k + 1)
			ok      bool
		}{
			{n: 3, m: 5, k: 7, ok: true},
			{n: 1, m: 1, k: 0, ok: true},
			{n: 3, m: 5, k: 7, ydims: []int64{7, 5, 9}}, // k + 1 violated
			{n: 3, m: 5, k: 7, ydims: []int64{7, 6, 8}}, // m differs from x's
			{n: 3, m: 5, k: 7, ydims: []int64{7, 5}},    // rank
		} {
			y := c.ydims
			if y == nil {
				y = []int64{c.k, c.m, c.k + 1}
			}
			got, err := simulate(out, "main", tensorOf("float32", c.n, c.m), tensorOf("float32", y...))
			if !c.ok {
				require.Error(t, err, "y = %v", y)
				continue
			}
			require.NoError(t, err)
			// The input returns R.shape([k + 1, m, 2]): evaluate it.
			assign := map[*ir.PrimVar]int64{vars["n"]: c.n, vars["m"]: c.m, vars["k"]: c.k}
			want := []int64{}
			for _, d := range in.Func("main").Body.(*ir.SeqExpr).Body.(*ir.ShapeExpr).Values {
				want = append(want, evalPrim(d, nil, assign))
			}
			require.Equal(t, want, got.shape)
		}
	})

	t.Run("composite_params", func(t *testing.T) {
		in := load(dir + "composite_params.tvms")
		out, _, errs := lower.LowerShapes(in, false)
		require.Empty(t, errs)
		for n := int64(0); n < 5; n++ {
			for _, second := range []int64{2 * n, 2*n + 1, n} {
				_, err := simulate(out, "main", tensorOf("float32", n), tensorOf("float32", n, second))
				require.Equal(t, second == 2*n, err == nil, "n=%d, y=(%d, %d): %v", n, n, second, err)
				_, err = simulate(out, "other", tensorOf("float32", n), tensorOf("float32", second))
				require.Equal(t, second == 2*n, err == nil, "p=%d, b=(%d,): %v", n, second, err)
			}
		}
		_, err := simulate(out, "main", tensorOf("int32", 2), tensorOf("float32", 2, 4))
		require.Error(t, err, "dtype")
	})

	t.Run("num_input", func(t *testing.T) {
		in := load(dir + "num_input.tvms")
		out, _, errs := lower.LowerShapes(in, true)
		require.Empty(t, errs)
		// The static weight w (index >= num_input) is not checked at all.
		_, err := simulate(out, "main", tensorOf("float32", 3, 4), tensorOf("float32", 9, 9), tensorOf("float32", 3, 4))
		require.NoError(t, err)
		_, err = simulate(out, "main", tensorOf("float32", 3, 4), tensorOf("float32", 4, 4), tensorOf("float32", 2, 4))
		require.Error(t, err, "the symbolic weight v is checked against x's n")
		// The storage size comes from the heap: the input's R.shape([n * 16])
		// evaluated at n = 3.
		var inSize ir.PrimExpr
		for _, b := range in.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings {
			if c, ok := b.(*ir.VarBinding).Value.(*ir.Call); ok && c.Op == op.VMAllocStorage {
				inSize = c.Args[0].(*ir.ShapeExpr).Values[0]
			}
		}
		n := symVars(in.Func("main"))["n"]
		_, env, err := simulateTrace(out, "main", tensorOf("float32", 3, 4), tensorOf("float32", 4, 4), tensorOf("float32", 3, 4))
		require.NoError(t, err)
		var sizes [][]int64
		for _, b := range out.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings {
			if c, ok := b.(*ir.VarBinding).Value.(*ir.Call); ok && c.Op == op.VMAllocStorage {
				sizes = append(sizes, env[c.Args[0].(*ir.Var)].shape)
			}
		}
		require.Equal(t, [][]int64{{evalPrim(inSize, nil, map[*ir.PrimVar]int64{n: 3})}}, sizes)
	})

	t.Run("prim_values", func(t *testing.T) {
		in := load(dir + "prim_values.tvms")
		out, _, errs := lower.LowerShapes(in, true)
		require.Empty(t, errs)
		_, err := simulate(out, "main", simValue{kind: "prim", prim: 6}, tensorOf("float32", 6))
		require.NoError(t, err)
		_, err = simulate(out, "main", simValue{kind: "prim", prim: 6}, tensorOf("float32", 5))
		require.Error(t, err)
	})

	t.Run("tuples", func(t *testing.T) {
		in := load(dir + "tuples.tvms")
		out, _, errs := lower.LowerShapes(in, true)
		require.Empty(t, errs)
		shape := func(d ...int64) simValue { return simValue{kind: "shape", shape: d} }
		tup := func(f ...simValue) simValue { return simValue{kind: "tuple", tuple: f} }
		good := tup(tensorOf("float32", 3), shape(5, 2))
		got, err := simulate(out, "main", good, tup(tensorOf("int8", 5, 3), simValue{kind: "object"}))
		require.NoError(t, err)
		require.Equal(t, []int64{3}, got.shape)
		for _, bad := range [][2]simValue{
			{good, tup(tensorOf("int8", 5, 4), simValue{kind: "object"})},                 // n differs
			{good, tup(tensorOf("int8", 4, 3), simValue{kind: "object"})},                 // m differs
			{tup(tensorOf("float32", 3), shape(5, 3)), tup(tensorOf("int8", 5, 3), good)}, // constant 2
			{good, tup(tensorOf("int8", 5, 3))},                                           // tuple size
		} {
			_, err := simulate(out, "main", bad[0], bad[1])
			require.Error(t, err, "%v", bad)
		}
	})

	t.Run("compute_prim_value", func(t *testing.T) {
		in := load("../testdata/passes/ComputePrimValue/composite.tvms")
		mid, _, errs := lower.ComputePrimValues(in)
		require.Empty(t, errs)
		out, _, errs := lower.LowerShapes(mid, true)
		require.Empty(t, errs)
		n := symVars(in.Func("main"))["n"]
		m := symVars(in.Func("main"))["m"]
		// main returns my.f(R.prim_value(n * 2 + 1), ...), and my.f is the
		// identity on its first argument.
		var first ir.PrimExpr
		for _, b := range in.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings {
			if c, ok := b.(*ir.VarBinding).Value.(*ir.Call); ok {
				first = c.Args[0].(*ir.PrimValue).Value
			}
		}
		for _, dims := range [][2]int64{{3, 4}, {0, 7}, {10, 1}} {
			got, err := simulate(out, "main", tensorOf("float32", dims[0], dims[1]))
			require.NoError(t, err)
			require.Equal(t, evalPrim(first, nil, map[*ir.PrimVar]int64{n: dims[0], m: dims[1]}), got.prim)
		}
	})
}
