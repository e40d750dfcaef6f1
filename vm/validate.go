package vm

import (
	"fmt"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Validate checks everything the interpreter relies on, so that a validated
// executable can never make it index out of range, jump outside a function,
// fall off a function's end or call something with the wrong argument count:
//
//   - function names are unique; a packed entry names a registered builtin, a
//     kernel entry a kernel of the kernel section; a VM function's code range
//     lies inside the code and ends with Ret or Goto;
//   - every register index is below the function's register count (or is
//     %void, or %vm as the first argument of a builtin that takes the
//     context), and every register read is a parameter or written somewhere
//     in the function;
//   - jumps go strictly forward and stay inside the function (so a function
//     body always terminates; only calls can repeat work);
//   - constant and function indices are in range; immediates fit in 56 bits;
//   - argument counts match: a VM function's parameter count, a kernel's
//     parameter count, a builtin's declared arity; kernel arguments that are
//     constants or immediates have the parameter's kind;
//   - constants are well-formed (a known dtype, a byte count equal to the
//     shape's element count times the element size).
func (e *Executable) Validate() error {
	e.validated = false
	var errs errorList
	kidx := e.kernelIndices()
	ext := e.externalSymbols()
	e.validateExternal(&errs)
	names := map[string]int{}
	for i, f := range e.Funcs {
		if f.Name == "" {
			errs.add("function %d has no name", i)
		}
		if j, dup := names[f.Name]; dup {
			errs.add("functions %d and %d are both named %q", j, i, f.Name)
		}
		names[f.Name] = i
		switch f.Kind {
		case FuncPacked:
			if _, isExt := ext[f.Name]; !isExt && LookupBuiltin(f.Name) == nil {
				errs.add("function %q: no builtin of that name is registered and no external module exports it", f.Name)
			}
		case FuncKernel:
			if _, ok := kidx[f.Name]; !ok {
				errs.add("function %q: no kernel of that name", f.Name)
			}
		case FuncVM:
			if f.Start < 0 || f.End > len(e.Code) || f.Start >= f.End {
				errs.add("function %q: code range [%d, %d) is outside [0, %d) or empty", f.Name, f.Start, f.End, len(e.Code))
				continue
			}
			if f.NumArgs < 0 || f.NumRegs < f.NumArgs || f.NumRegs > maxRegs {
				errs.add("function %q: %d parameters in %d registers", f.Name, f.NumArgs, f.NumRegs)
				continue
			}
			if len(f.ParamNames) != 0 && len(f.ParamNames) != f.NumArgs {
				errs.add("function %q: %d parameter names for %d parameters", f.Name, len(f.ParamNames), f.NumArgs)
			}
			if len(f.Sigs) != 0 && len(f.Sigs) != f.NumArgs {
				errs.add("function %q: %d parameter signatures for %d parameters", f.Name, len(f.Sigs), f.NumArgs)
			}
			for j, sg := range f.Sigs {
				if sg.NDim < -1 || sg.NDim > maxNDim || (sg.Dims != nil && len(sg.Dims) != sg.NDim) {
					errs.add("function %q: parameter %d: rank %d with %d dimensions", f.Name, j, sg.NDim, len(sg.Dims))
				}
				if sg.DType != "" {
					if _, err := tensor.ParseDType(sg.DType); err != nil {
						errs.add("function %q: parameter %d: %v", f.Name, j, err)
					}
				}
			}
		default:
			errs.add("function %d: unknown kind %d", i, f.Kind)
		}
	}
	kernelNames := map[string]bool{}
	for i, k := range e.Kernels {
		if kernelNames[k.Name] || k.Name == "" {
			errs.add("kernel %d: empty or duplicate name %q", i, k.Name)
		}
		kernelNames[k.Name] = true
		if k.Ret != "" {
			if _, err := tensor.ParseDType(k.Ret); err != nil {
				errs.add("kernel %q return type: %v", k.Name, err)
			}
		}
		for j, p := range k.Params {
			if p.Kind > abi.ParamFloat {
				errs.add("kernel %q parameter %d: unknown kind %d", k.Name, j, p.Kind)
			}
			if _, err := tensor.ParseDType(p.DType); err != nil {
				errs.add("kernel %q parameter %d: %v", k.Name, j, err)
			}
			if p.NDim < 0 || p.NDim > maxNDim || (p.Kind != abi.ParamBuffer && p.NDim != 0) {
				errs.add("kernel %q parameter %d: rank %d", k.Name, j, p.NDim)
			}
		}
	}
	for i, c := range e.Constants {
		if err := c.validate(); err != nil {
			errs.add("constant %d: %v", i, err)
		}
	}
	if len(e.Pos) > len(e.Code) {
		errs.add("source map has %d entries for %d instructions", len(e.Pos), len(e.Code))
	}
	if len(errs) > 0 {
		return errs.err() // instruction checks below rely on the tables
	}
	written := make([]int32, 0)
	for fi := range e.Funcs {
		f := &e.Funcs[fi]
		if f.Kind != FuncVM {
			continue
		}
		// Registers written in the function (mark = fi+1, so the slice is shared).
		if cap(written) < f.NumRegs {
			written = make([]int32, f.NumRegs)
		}
		written = written[:f.NumRegs]
		clear(written)
		for r := 0; r < f.NumArgs; r++ {
			written[r] = 1
		}
		for pc := f.Start; pc < f.End; pc++ {
			if in := &e.Code[pc]; in.Op == OpCall && in.Dst >= 0 && in.Dst < int64(f.NumRegs) {
				written[in.Dst] = 1
			}
		}
		for pc := f.Start; pc < f.End; pc++ {
			e.validateInstr(f, pc, written, kidx, &errs)
			if len(errs) >= 20 {
				return errs.err()
			}
		}
	}
	e.validated = len(errs) == 0
	return errs.err()
}

func (e *Executable) validateInstr(f *Function, pc int, written []int32, kidx map[string]int, errs *errorList) {
	in := &e.Code[pc]
	where := func() string { return fmt.Sprintf("function %q instruction %d (%s)", f.Name, pc-f.Start, in.Op) }
	// readReg checks a register read; what names it (argument j when j >= 0).
	readReg := func(r int64, what string, j int) {
		if r != RegVoid && (r < 0 || r >= int64(f.NumRegs) || written[r] == 0) {
			if j >= 0 {
				what = fmt.Sprintf("argument %d", j)
			}
			if r < 0 || r >= int64(f.NumRegs) {
				errs.add("%s: %s register %d out of range [0, %d)", where(), what, r, f.NumRegs)
			} else {
				errs.add("%s: %s register %%%d is read but never written", where(), what, r)
			}
		}
	}
	fallsThrough := func() {
		if pc+1 >= f.End {
			errs.add("%s: the function ends without ret or goto", where())
		}
	}
	jump := func(off int64) {
		if off <= 0 || off >= int64(f.End-pc) {
			errs.add("%s: jump offset %d leaves the function or goes backwards (allowed 1..%d)", where(), off, f.End-pc-1)
		}
	}
	switch in.Op {
	case OpRet:
		if in.Reg == RegVoid {
			errs.add("%s: returns %%void", where())
			return
		}
		readReg(in.Reg, "result", -1)
	case OpGoto:
		jump(in.Offset)
	case OpIf:
		if in.Reg == RegVoid {
			errs.add("%s: condition is %%void", where())
		}
		readReg(in.Reg, "condition", -1)
		jump(in.Offset)
		fallsThrough()
	case OpCall:
		fallsThrough()
		if in.Dst != RegVoid && (in.Dst < 0 || in.Dst >= int64(f.NumRegs)) {
			errs.add("%s: destination register %d out of range [0, %d)", where(), in.Dst, f.NumRegs)
		}
		if in.Func < 0 || in.Func >= int64(len(e.Funcs)) {
			errs.add("%s: function index %d out of range [0, %d)", where(), in.Func, len(e.Funcs))
			return
		}
		callee := &e.Funcs[in.Func]
		var b *Builtin
		if callee.Kind == FuncPacked {
			b = LookupBuiltin(callee.Name)
		}
		for j, a := range in.Args {
			switch a.Kind() {
			case ArgRegister:
				if a.Value() == RegVM {
					if j != 0 || b == nil || !b.WithCtx {
						errs.add("%s: %%vm passed as argument %d to %s, which does not take the VM context there", where(), j, callee.Name)
					}
					continue
				}
				readReg(a.Value(), "", j)
			case ArgImmediate:
			case ArgConstIdx:
				if v := a.Value(); v < 0 || v >= int64(len(e.Constants)) {
					errs.add("%s: argument %d: constant index %d out of range [0, %d)", where(), j, v, len(e.Constants))
				}
			case ArgFuncIdx:
				if v := a.Value(); v < 0 || v >= int64(len(e.Funcs)) {
					errs.add("%s: argument %d: function index %d out of range [0, %d)", where(), j, v, len(e.Funcs))
				}
			default:
				errs.add("%s: argument %d has unknown kind %d", where(), j, a.Kind())
			}
		}
		args := in.Args
		switch callee.Kind {
		case FuncVM:
			if len(args) != callee.NumArgs {
				errs.add("%s: %s takes %d arguments, got %d", where(), callee.Name, callee.NumArgs, len(args))
			}
		case FuncKernel:
			e.validateKernelArgs(e.Kernels[kidx[callee.Name]], args, where, errs)
		case FuncPacked:
			if b == nil {
				break // an external module's function: its linker checks its arguments
			}
			if b.WithCtx {
				if len(args) == 0 || !args[0].IsVMReg() {
					errs.add("%s: %s takes the VM context (%%vm) as its first argument", where(), b.Name)
					return
				}
				args = args[1:]
			}
			if len(args) < b.MinArgs || (b.MaxArgs >= 0 && len(args) > b.MaxArgs) {
				errs.add("%s: %s takes %s, got %d", where(), b.Name, b.arity(), len(args))
				return
			}
			if b.Name == abi.BuiltinCallTIRDyn {
				a := args[0]
				if a.Kind() != ArgFuncIdx || a.Value() < 0 || a.Value() >= int64(len(e.Funcs)) || e.Funcs[a.Value()].Kind != FuncKernel {
					errs.add("%s: %s needs a kernel as its first argument", where(), abi.BuiltinCallTIRDyn)
				}
			}
		}
	}
}

// validateKernelArgs checks the argument count and the kinds of the
// arguments known statically (constants and immediates).
func (e *Executable) validateKernelArgs(k Kernel, args []Arg, where func() string, errs *errorList) {
	if len(args) != len(k.Params) {
		errs.add("%s: kernel %s takes %d arguments, got %d", where(), k.Name, len(k.Params), len(args))
		return
	}
	for j, a := range args {
		p := k.Params[j]
		var kind ConstKind = 255
		switch a.Kind() {
		case ArgImmediate:
			kind = ConstInt
		case ArgConstIdx:
			kind = e.Constants[a.Value()].Kind
		case ArgFuncIdx:
			errs.add("%s: kernel %s argument %d is a function", where(), k.Name, j)
			continue
		}
		ok := true
		switch kind {
		case 255: // a register: checked at run time
		case ConstTensor:
			ok = p.Kind == abi.ParamBuffer && len(e.Constants[a.Value()].Dims) == p.NDim
		case ConstInt:
			ok = p.Kind == abi.ParamInt || p.Kind == abi.ParamFloat
		case ConstFloat:
			ok = p.Kind == abi.ParamFloat
		default:
			ok = false
		}
		if !ok {
			errs.add("%s: kernel %s argument %d does not fit its %s parameter", where(), k.Name, j, p.Kind)
		}
	}
}

func (c *Constant) validate() error {
	switch c.Kind {
	case ConstTensor:
		dt, err := tensor.ParseDType(c.DType)
		if err != nil {
			return err
		}
		n := int64(dt.Size())
		for _, d := range c.Dims {
			if d < 0 || (d > 0 && n > (1<<40)/d) {
				return fmt.Errorf("bad tensor shape %v", c.Dims)
			}
			n *= d
		}
		if n != int64(len(c.Data)) {
			return fmt.Errorf("tensor %s%v needs %d bytes, has %d", c.DType, c.Dims, n, len(c.Data))
		}
	case ConstDType:
		if _, err := parseDType(c.DType); err != nil {
			return err
		}
	case ConstShape, ConstString, ConstInt, ConstFloat:
	default:
		return fmt.Errorf("unknown kind %d", c.Kind)
	}
	return nil
}

// validateExternal checks the external modules: a kind, symbols that are
// unique across modules and shadow no builtin. What a payload holds only
// the module's linker can check (at link time).
func (e *Executable) validateExternal(errs *errorList) {
	seen := map[string]bool{}
	for i, x := range e.External {
		if x.Kind == "" {
			errs.add("external module %d has no kind", i)
		}
		for _, s := range x.Symbols {
			switch {
			case s == "":
				errs.add("external module %d (%s) exports an empty symbol", i, x.Kind)
			case seen[s]:
				errs.add("external symbol %q is exported twice", s)
			case LookupBuiltin(s) != nil:
				errs.add("external symbol %q of module %d (%s) shadows a builtin", s, i, x.Kind)
			}
			seen[s] = true
		}
	}
}
