// Package codegen turns a module in phase build into a vm.Executable, after
// TVM's CodeGenVM (src/relax/backend/vm/codegen_vm.cc): each Relax function
// becomes a VM function (one register per binding, parameters first), leaf
// values go to the constant pool or become immediates, PrimFuncs called
// from Relax become kernels (their TIR encoded by ir/tirenc, and their
// signature), and
// call_packed / call_builtin_with_ctx names become builtin entries checked
// against the registry now, so that anything the VM cannot run is a
// positioned build error rather than a runtime surprise.
//
// The input must have passed the build barrier: Build checks the recorded
// phase and the build invariants (wellformed.Check) before emitting
// anything. The runtime side, loading and linking an executable, is
// package vm/loader, which needs none of the compiler.
package codegen

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/tirenc"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
	"github.com/phasec/phasec/wellformed"
)

// vmcCodes is the family of code generation's diagnostic codes.
var vmcCodes = diag.NewFamily("VMC", "VM code generation (codegen): a module in phase build the VM cannot run")

// Diagnostic codes of code generation.
var (
	codePhase       = vmcCodes.Define("VMC001", "the module has not passed the build barrier")
	codeUnsupported = vmcCodes.Define("VMC002", "an expression the VM cannot run")
	codeBuiltin     = vmcCodes.Define("VMC003", "an unknown packed function")
	codeKernel      = vmcCodes.Define("VMC004", "a PrimFunc that cannot be a kernel")
	codeExternal    = vmcCodes.Define("VMC005", "the module's external_mods attribute is malformed")
)

// ExternalModules reads the module attribute external_mods, which
// RunCodegen writes (TVM's tvm::attr::kExternalMods): a list of
// {"kind": str, "symbols": [str, ...], "payload": str} records, the
// external codegens' compiled modules, which the executable carries.
func ExternalModules(mod *ir.Module) ([]vm.ExternalModule, error) {
	v, ok := mod.Attrs[ir.AttrExternalMods]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("module attribute %s must be a list, got %T", ir.AttrExternalMods, v)
	}
	out := make([]vm.ExternalModule, len(list))
	for i, x := range list {
		rec, ok := x.(ir.Attrs)
		if !ok {
			return nil, fmt.Errorf("%s[%d] must be a map, got %T", ir.AttrExternalMods, i, x)
		}
		kind, ok1 := rec["kind"].(string)
		payload, ok2 := rec["payload"].(string)
		syms, ok3 := rec["symbols"].([]any)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s[%d] needs a string kind, a string payload and a list of symbols", ir.AttrExternalMods, i)
		}
		m := vm.ExternalModule{Kind: kind, Payload: []byte(payload)}
		for _, s := range syms {
			str, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: symbol %v is not a string", ir.AttrExternalMods, i, s)
			}
			m.Symbols = append(m.Symbols, str)
		}
		out[i] = m
	}
	return out, nil
}

// Build compiles a module in phase build into an executable.
func Build(mod *ir.Module) (*vm.Executable, diag.List) {
	var errs diag.List
	modSpan := diag.Span{File: mod.Source, Line: 1, Col: 1}
	p, err := phase.Recorded(mod)
	if err != nil || p != phase.Build {
		got := "none"
		if err == nil && p != phase.None {
			got = p.String()
		} else if err != nil {
			got = err.Error()
		}
		errs.Add(modSpan, codePhase, "VM code generation needs a module in phase build, this one is in phase %s", got).Hint =
			"run the build barrier first: phasec opt --passes canonicalize,lower,build"
		return nil, errs
	}
	if d := wellformed.Check(mod, phase.Build); d.HasErrors() {
		return nil, d
	}
	g := &gen{mod: mod, b: vm.NewBuilder(), kernels: map[string]bool{}, external: map[string]bool{}}
	ext, err := ExternalModules(mod)
	if err != nil {
		errs.Add(modSpan, codeExternal, "%v", err)
		return nil, errs
	}
	for _, x := range ext {
		g.b.AddExternal(x)
		for _, s := range x.Symbols {
			g.external[s] = true
		}
	}
	for name, f := range mod.Functions() {
		if rf, ok := f.(*ir.Function); ok {
			g.function(name, rf)
		}
	}
	if len(g.errs) > 0 {
		return nil, g.errs
	}
	exe, err := g.b.Finish()
	if err != nil {
		errs.Add(modSpan, codeUnsupported, "internal error: the generated executable is invalid: %v", err)
		return nil, errs
	}
	return exe, nil
}

type gen struct {
	mod     *ir.Module
	b       *vm.Builder
	errs    diag.List
	kernels map[string]bool
	// external holds the symbols the external modules export.
	external map[string]bool
	vars     map[*ir.Var]vm.Arg
	fn       string
	fnPos    vm.Pos // where bindings without a span (inserted by passes) point
}

func posOf(s diag.Span) vm.Pos { return vm.Pos{File: s.File, Line: s.Line, Col: s.Col} }

func (g *gen) errorf(span diag.Span, code diag.Code, format string, args ...any) vm.Arg {
	g.errs.Add(span, code, format, args...)
	return vm.RegArg(vm.RegVoid)
}

func (g *gen) function(name string, f *ir.Function) {
	g.fn = name
	g.fnPos = posOf(f.Span())
	g.vars = map[*ir.Var]vm.Arg{}
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		params[i] = p.Name
		g.vars[p] = vm.RegArg(int64(i))
	}
	g.b.BeginFunc(name, params)
	g.b.SetSigs(signatures(f))
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		g.errorf(f.Span(), codeUnsupported, "function %s: body is not a SeqExpr", name)
		g.b.EndFunc()
		return
	}
	res := g.seq(seq)
	pos := posOf(seq.Body.Span())
	if !pos.IsValid() {
		pos = posOf(f.Span())
	}
	g.b.Ret(g.ensureReg(res, pos), pos)
	g.b.EndFunc()
}

// ensureReg returns a register holding a (copying a non-register into one).
func (g *gen) ensureReg(a vm.Arg, pos vm.Pos) int64 {
	if a.IsReg() && !a.IsVoid() && !a.IsVMReg() {
		return a.Value()
	}
	r := g.b.NewReg()
	g.b.CallPacked(r, abi.BuiltinCopy, []vm.Arg{a}, pos)
	return r
}

func (g *gen) seq(s *ir.SeqExpr) vm.Arg {
	for _, blk := range s.Blocks {
		for _, bnd := range blk.Bindings {
			var v *ir.Var
			var value ir.Expr
			switch b := bnd.(type) {
			case *ir.VarBinding:
				v, value = b.Var, b.Value
			case *ir.MatchCast:
				// VMShapeLower made every check explicit: a plain binding.
				v, value = b.Var, b.Value
			}
			pos := posOf(bnd.Span())
			if !pos.IsValid() {
				pos = posOf(value.Span())
			}
			if !pos.IsValid() {
				pos = g.fnPos
			}
			a := g.expr(value, pos)
			if _, ok := value.(*ir.Var); ok && a.IsReg() && !a.IsVoid() {
				// A fresh register per binding, so a kill clears one binding.
				r := g.b.NewReg()
				g.b.CallPacked(r, abi.BuiltinCopy, []vm.Arg{a}, pos)
				a = vm.RegArg(r)
			}
			g.vars[v] = a
		}
	}
	return g.expr(s.Body, posOf(s.Body.Span()))
}

func isVoidInfo(s ir.StructInfo) bool {
	t, ok := s.(*ir.TupleInfo)
	return ok && len(t.Fields) == 0
}

// dst is a fresh register, or %void for calls returning the empty tuple.
func (g *gen) dst(call *ir.Call) int64 {
	if isVoidInfo(call.StructInfo()) {
		return vm.RegVoid
	}
	return g.b.NewReg()
}

func (g *gen) args(es []ir.Expr, pos vm.Pos) []vm.Arg {
	out := make([]vm.Arg, 0, len(es))
	for _, e := range es {
		out = append(out, g.expr(e, pos))
	}
	return out
}

func retArg(dst int64) vm.Arg { return vm.RegArg(dst) }

func (g *gen) expr(e ir.Expr, pos vm.Pos) vm.Arg {
	switch e := e.(type) {
	case *ir.Var:
		a, ok := g.vars[e]
		if !ok {
			return g.errorf(e.Span(), codeUnsupported, "variable %s is used before it is defined", e.Name)
		}
		return a
	case *ir.Constant:
		return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstTensor, DType: e.Data.DType.String(),
			Dims: append([]int64(nil), e.Data.Shape...), Data: e.Data.Data}))
	case *ir.ShapeExpr:
		dims := make([]int64, len(e.Values))
		for i, v := range e.Values {
			imm, ok := v.(*ir.IntImm)
			if !ok {
				return g.errorf(e.Span(), codeUnsupported, "shape dimension %d is symbolic: only constant shapes remain after VMShapeLower", i)
			}
			dims[i] = imm.Value
		}
		return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstShape, Dims: dims}))
	case *ir.PrimValue:
		switch v := e.Value.(type) {
		case *ir.IntImm:
			if v.Value >= -vm.MaxImmediate && v.Value <= vm.MaxImmediate {
				return vm.ImmArg(v.Value)
			}
			return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstInt, Int: v.Value}))
		case *ir.FloatImm:
			return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstFloat, Float: v.Value}))
		}
		return g.errorf(e.Span(), codeUnsupported, "prim value %s is not a constant: VMShapeLower and ComputePrimValue lower symbolic prim values", ir.FormatPrim(e.Value, func(v *ir.PrimVar) string { return v.Name }))
	case *ir.StringImm:
		return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstString, Str: e.Value}))
	case *ir.DataTypeImm:
		dt := e.Value.String()
		if e.Value.IsVoid() {
			dt = "void" // an unknown dtype (check_tensor_info's "any")
		}
		return vm.ConstArg(g.b.Const(vm.Constant{Kind: vm.ConstDType, DType: dt}))
	case *ir.Tuple:
		args := g.args(e.Fields, pos)
		r := g.b.NewReg()
		g.b.CallPacked(r, abi.BuiltinMakeTuple, args, pos)
		return vm.RegArg(r)
	case *ir.TupleGetItem:
		t := g.expr(e.Tuple, pos)
		r := g.b.NewReg()
		g.b.CallPacked(r, abi.BuiltinTupleGetItem, []vm.Arg{t, vm.ImmArg(int64(e.Index))}, pos)
		return vm.RegArg(r)
	case *ir.If:
		return g.ifExpr(e, pos)
	case *ir.Call:
		return g.call(e, pos)
	case *ir.GlobalVar:
		return g.globalRef(e)
	case *ir.ExternFunc:
		if vm.LookupBuiltin(e.Symbol) == nil && !g.external[e.Symbol] {
			return g.errorf(e.Span(), codeBuiltin, "unknown packed function %q: no VM builtin of that name and no external module exports it", e.Symbol)
		}
		return vm.FuncArg(g.b.Packed(e.Symbol))
	case *ir.Function:
		return g.errorf(e.Span(), codeUnsupported, "a local function remains: LambdaLift should have lifted it")
	}
	return g.errorf(e.Span(), codeUnsupported, "the VM cannot evaluate a %T here", e)
}

// globalRef is a function of the module used as a value (or as a callee).
func (g *gen) globalRef(gv *ir.GlobalVar) vm.Arg {
	f, ok := g.mod.Lookup(gv.Name)
	if !ok {
		return g.errorf(gv.Span(), codeUnsupported, "no function %s in the module", gv.Name)
	}
	switch f := f.(type) {
	case *ir.Function:
		return vm.FuncArg(g.b.FuncRef(gv.Name))
	case *ir.PrimFunc:
		return vm.FuncArg(g.kernel(gv, f))
	}
	return g.errorf(gv.Span(), codeUnsupported, "%s is not a function", gv.Name)
}

func (g *gen) ifExpr(e *ir.If, pos vm.Pos) vm.Arg {
	cond := g.expr(e.Cond, pos)
	rc := g.b.NewReg()
	g.b.CallPacked(rc, abi.BuiltinReadIfCond, []vm.Arg{cond}, pos)
	jf := g.b.If(rc, pos)
	res := g.b.NewReg()
	then, ok1 := e.Then.(*ir.SeqExpr)
	els, ok2 := e.Else.(*ir.SeqExpr)
	if !ok1 || !ok2 {
		return g.errorf(e.Span(), codeUnsupported, "If branches must be SeqExprs")
	}
	t := g.seq(then)
	g.b.CallPacked(res, abi.BuiltinCopy, []vm.Arg{t}, pos)
	jend := g.b.Goto(pos)
	g.b.PatchJump(jf)
	f := g.seq(els)
	g.b.CallPacked(res, abi.BuiltinCopy, []vm.Arg{f}, pos)
	g.b.PatchJump(jend)
	return vm.RegArg(res)
}

func (g *gen) call(c *ir.Call, pos vm.Pos) vm.Arg {
	switch callee := c.Op.(type) {
	case *ir.Op:
		return g.opCall(callee, c, pos)
	case *ir.GlobalVar:
		if ef, ok := g.mod.Lookup(callee.Name); ok {
			if ef, ok := ef.(*ir.ExternFunc); ok {
				// cls.f for a member f = R.ExternFunc("sym"): a packed call of sym.
				return g.call(&ir.Call{Op: ef, Args: c.Args, SInfoArgs: c.SInfoArgs}, pos)
			}
		}
		fn := g.globalRef(callee)
		if fn.IsVoid() {
			return fn
		}
		args := g.args(c.Args, pos)
		dst := g.dst(c)
		g.b.Call(dst, int(fn.Value()), args, pos)
		return retArg(dst)
	case *ir.ExternFunc:
		if callee.Symbol == abi.BuiltinCallTIRDyn && len(c.Args) > 0 {
			if _, ok := c.Args[0].(*ir.GlobalVar); !ok {
				// TVM parses R.vm.call_tir_dyn("name", ...) too, and its
				// runtime fails to call the string; phasec's VM calls a
				// kernel of the module only.
				sp := c.Span()
				if !sp.IsValid() {
					sp = c.Args[0].Span()
				}
				return g.errorf(sp, codeUnsupported, "R.vm.call_tir_dyn calls %s: the VM calls a PrimFunc of the module (cls.f), not a function named at run time", describeCallee(c.Args[0]))
			}
		}
		fn := g.expr(callee, pos)
		if fn.IsVoid() {
			return fn
		}
		args := g.args(c.Args, pos)
		if b := vm.LookupBuiltin(callee.Symbol); b != nil && b.WithCtx {
			args = append([]vm.Arg{vm.RegArg(vm.RegVM)}, args...)
		}
		dst := g.dst(c)
		g.b.Call(dst, int(fn.Value()), args, pos)
		return retArg(dst)
	case *ir.Var:
		clo := g.expr(callee, pos)
		args := append([]vm.Arg{vm.RegArg(vm.RegVM), clo}, g.args(c.Args, pos)...)
		dst := g.dst(c)
		g.b.CallPacked(dst, abi.BuiltinInvokeClosure, args, pos)
		return retArg(dst)
	}
	return g.errorf(c.Span(), codeUnsupported, "cannot call a %T", c.Op)
}

// tupleArgs flattens the tuple argument of call_builtin_with_ctx.
func (g *gen) tupleArgs(e ir.Expr, pos vm.Pos) []vm.Arg {
	if t, ok := e.(*ir.Tuple); ok {
		return g.args(t.Fields, pos)
	}
	return []vm.Arg{g.expr(e, pos)}
}

// opCall emits a call of an op that is legal at Build (ir.Op.LegalAtBuild,
// the set the checker's BuiltinsLowered rule admits); Build checks that
// property first, so any other op here is a checker bug.
func (g *gen) opCall(o *ir.Op, c *ir.Call, pos vm.Pos) vm.Arg {
	if !o.LegalAtBuild {
		return g.errorf(c.Span(), codeUnsupported, "CodeGenVM cannot handle the intrinsic %s (the build barrier should have lowered it)", o.Name)
	}
	switch o {
	case op.CallBuiltinWithCtx:
		ext, ok := c.Args[0].(*ir.ExternFunc)
		if !ok {
			return g.errorf(c.Span(), codeUnsupported, "call_builtin_with_ctx needs an extern function")
		}
		fn := g.expr(ext, pos)
		if fn.IsVoid() {
			return fn
		}
		args := []vm.Arg{vm.RegArg(vm.RegVM)}
		if len(c.Args) > 1 {
			args = append(args, g.tupleArgs(c.Args[1], pos)...)
		}
		if b := vm.LookupBuiltin(ext.Symbol); b != nil && !b.WithCtx {
			args = args[1:] // a builtin that does not take the context
		}
		dst := g.dst(c)
		g.b.Call(dst, int(fn.Value()), args, pos)
		return retArg(dst)
	case op.CallPacked:
		name := ""
		switch f := c.Args[0].(type) {
		case *ir.ExternFunc:
			name = f.Symbol
		case *ir.StringImm:
			name = f.Value
		}
		return g.call(&ir.Call{Op: ir.NewExternFunc(name), Args: c.Args[1:], SInfoArgs: c.SInfoArgs}, pos)
	case op.VMAllocStorage:
		args := append([]vm.Arg{vm.RegArg(vm.RegVM)}, g.args(c.Args, pos)...)
		r := g.b.NewReg()
		g.b.CallPacked(r, abi.BuiltinAllocStorage, args, pos)
		return vm.RegArg(r)
	case op.VMAllocTensor:
		// vm.builtin.alloc_tensor takes (storage, offset, shape, dtype); the
		// fifth argument, runtime_device_index, names the device the storage
		// already lives on, so the single-device VM has no use for it.
		r := g.b.NewReg()
		g.b.CallPacked(r, abi.BuiltinAllocTensor, g.args(c.Args[:4], pos), pos)
		return vm.RegArg(r)
	case op.VMKillObject:
		a := g.expr(c.Args[0], pos)
		if a.IsReg() && !a.IsVoid() && !a.IsVMReg() {
			g.b.CallPacked(a.Value(), abi.BuiltinNullValue, nil, pos)
		}
		return vm.RegArg(vm.RegVoid)
	case op.NullValue:
		return vm.RegArg(vm.RegVoid)
	}
	return g.errorf(c.Span(), codeUnsupported, "op %s is legal at Build but CodeGenVM has no emitter for it", o.Name)
}

// kernel adds PrimFunc f (the callee gv) to the kernel table once.
func (g *gen) kernel(gv *ir.GlobalVar, f *ir.PrimFunc) int {
	if g.kernels[gv.Name] {
		return g.b.AddKernel(vm.Kernel{Name: gv.Name})
	}
	g.kernels[gv.Name] = true
	params, err := Signature(f)
	if err != nil {
		g.errorf(f.Span(), codeKernel, "PrimFunc %s: %v", gv.Name, err)
	} else if _, err := kernel.Compile(f, gv.Name); err != nil {
		// What the VM could not load is a build error, at the PrimFunc.
		var ce *kernel.CompileError
		if errors.As(err, &ce) && ce.Span.IsValid() {
			g.errs = append(g.errs, &diag.Diagnostic{Span: ce.Span, Severity: diag.Error, Code: codeKernel,
				Msg: fmt.Sprintf("kernel %s cannot be compiled: %s", gv.Name, ce.Msg)})
		} else {
			g.errorf(f.Span(), codeKernel, "kernel %s cannot be compiled: %v", gv.Name, err)
		}
	}
	ret := ""
	if !f.Ret.IsVoid() {
		ret = f.Ret.String()
	}
	data, err := tirenc.Encode(f)
	if err != nil {
		g.errorf(f.Span(), codeKernel, "kernel %s cannot be stored: %v", gv.Name, err)
	}
	return g.b.AddKernel(vm.Kernel{Name: gv.Name, TIR: data, Params: params, Ret: ret})
}

// Signature is the kernel signature of a PrimFunc: a buffer (dtype, rank)
// per handle parameter, an int or float per scalar.
func Signature(f *ir.PrimFunc) ([]abi.Param, error) {
	out := make([]abi.Param, len(f.Params))
	for i, p := range f.Params {
		if buf := f.BufferMap[p]; buf != nil {
			out[i] = abi.Param{Kind: abi.ParamBuffer, DType: buf.DType.String(), NDim: len(buf.Shape)}
			continue
		}
		switch t := p.Type; {
		case t.IsInt() || t.IsUInt() || t.IsBool():
			out[i] = abi.Param{Kind: abi.ParamInt, DType: t.String()}
		case t.IsFloat():
			out[i] = abi.Param{Kind: abi.ParamFloat, DType: t.String()}
		default:
			return nil, fmt.Errorf("parameter %s of type %s is neither a buffer nor a scalar", p.Name, t)
		}
	}
	return out, nil
}

// signatures records the parameters' declared struct info.
func signatures(f *ir.Function) []vm.ParamSig {
	name := func(v *ir.PrimVar) string { return v.Name }
	sigs := make([]vm.ParamSig, len(f.Params))
	for i, p := range f.Params {
		si := p.StructInfo()
		sg := vm.ParamSig{NDim: -1}
		if si != nil {
			sg.Annotation = ir.FormatStructInfo(si, name)
		}
		if t, ok := si.(*ir.TensorInfo); ok {
			sg.Tensor = true
			sg.NDim = t.NDim
			if !t.DType.IsVoid() {
				sg.DType = t.DType.String()
			}
			if dims, ok := t.Dims(); ok {
				sg.NDim = len(dims)
				sg.Dims = make([]string, len(dims))
				for j, d := range dims {
					sg.Dims[j] = ir.FormatPrim(d, name)
				}
			}
		}
		sigs[i] = sg
	}
	return sigs
}

// describeCallee names a call_tir_dyn callee for a diagnostic.
func describeCallee(e ir.Expr) string {
	switch e := e.(type) {
	case *ir.StringImm:
		return strconv.Quote(e.Value)
	case *ir.ExternFunc:
		return "R.ExternFunc(" + strconv.Quote(e.Symbol) + ")"
	}
	return fmt.Sprintf("a %T", e)
}
