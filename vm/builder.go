package vm

import (
	"fmt"

	"github.com/phasec/phasec/vm/abi"
)

// Builder assembles an executable, like TVM's ExecBuilder: declare
// functions, emit instructions into the current function, then Finish.
// Functions may be referenced (FuncRef) before they are emitted.
type Builder struct {
	exe      Executable
	index    map[string]int
	consts   map[string]int // dedup key -> constant index
	cur      int            // function being emitted, or -1
	emitted  map[int]bool
	firstErr error
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	return &Builder{index: map[string]int{}, consts: map[string]int{}, cur: -1, emitted: map[int]bool{}}
}

func (b *Builder) errorf(format string, args ...any) {
	if b.firstErr == nil {
		b.firstErr = fmt.Errorf(format, args...)
	}
}

// declare returns the table index of name, adding an entry of kind k.
func (b *Builder) declare(name string, k FuncKind) int {
	if i, ok := b.index[name]; ok {
		if b.exe.Funcs[i].Kind != k {
			b.errorf("%q declared as both %s and %s", name, b.exe.Funcs[i].Kind, k)
		}
		return i
	}
	b.exe.Funcs = append(b.exe.Funcs, Function{Kind: k, Name: name})
	b.index[name] = len(b.exe.Funcs) - 1
	return len(b.exe.Funcs) - 1
}

// Packed returns the table index of a builtin (declared on first use).
func (b *Builder) Packed(name string) int { return b.declare(name, FuncPacked) }

// FuncRef returns the table index of a VM function, emitted now or later.
func (b *Builder) FuncRef(name string) int { return b.declare(name, FuncVM) }

// AddKernel adds a kernel and its table entry; it returns the table index.
func (b *Builder) AddKernel(k Kernel) int {
	if _, ok := b.index[k.Name]; !ok {
		k.Params = append([]abi.Param(nil), k.Params...)
		b.exe.Kernels = append(b.exe.Kernels, k)
	}
	return b.declare(k.Name, FuncKernel)
}

// Const adds a constant (deduplicated by content for everything but
// tensors, which are usually distinct and large) and returns its index.
func (b *Builder) Const(c Constant) int {
	key := ""
	switch c.Kind {
	case ConstTensor:
	case ConstShape:
		key = fmt.Sprintf("s%v", c.Dims)
	case ConstString:
		key = "q" + c.Str
	case ConstDType:
		key = "d" + c.DType
	case ConstInt:
		key = fmt.Sprintf("i%d", c.Int)
	case ConstFloat:
		key = fmt.Sprintf("f%x", c.Float)
	}
	if key != "" {
		if i, ok := b.consts[key]; ok {
			return i
		}
		b.consts[key] = len(b.exe.Constants)
	}
	b.exe.Constants = append(b.exe.Constants, c)
	return len(b.exe.Constants) - 1
}

// BeginFunc starts emitting function name with the given parameter names.
func (b *Builder) BeginFunc(name string, params []string) {
	if b.cur >= 0 {
		b.errorf("BeginFunc(%s) inside %s", name, b.exe.Funcs[b.cur].Name)
	}
	i := b.declare(name, FuncVM)
	if b.emitted[i] {
		b.errorf("function %q emitted twice", name)
	}
	b.emitted[i] = true
	f := &b.exe.Funcs[i]
	f.Start = len(b.exe.Code)
	f.NumArgs = len(params)
	f.NumRegs = len(params)
	f.ParamNames = append([]string(nil), params...)
	b.cur = i
}

// SetSigs records the current function's parameter signatures.
func (b *Builder) SetSigs(sigs []ParamSig) { b.exe.Funcs[b.cur].Sigs = sigs }

// NewReg allocates a fresh register in the current function.
func (b *Builder) NewReg() int64 {
	f := &b.exe.Funcs[b.cur]
	f.NumRegs++
	return int64(f.NumRegs - 1)
}

func (b *Builder) emit(in Instr, pos Pos) int {
	if b.cur < 0 {
		b.errorf("instruction outside a function")
		return 0
	}
	b.exe.Code = append(b.exe.Code, in)
	b.exe.Pos = append(b.exe.Pos, pos)
	return len(b.exe.Code) - 1
}

// Call emits dst = func(args...); dst may be RegVoid.
func (b *Builder) Call(dst int64, fn int, args []Arg, pos Pos) {
	b.emit(Instr{Op: OpCall, Dst: dst, Func: int64(fn), Args: args}, pos)
}

// CallPacked is Call to a builtin by name.
func (b *Builder) CallPacked(dst int64, name string, args []Arg, pos Pos) {
	b.Call(dst, b.Packed(name), args, pos)
}

// Ret emits a return of register r.
func (b *Builder) Ret(r int64, pos Pos) { b.emit(Instr{Op: OpRet, Reg: r}, pos) }

// If emits a conditional jump whose false offset is patched later with
// PatchJump; it returns the instruction's index.
func (b *Builder) If(cond int64, pos Pos) int { return b.emit(Instr{Op: OpIf, Reg: cond}, pos) }

// Goto emits a jump patched later with PatchJump.
func (b *Builder) Goto(pos Pos) int { return b.emit(Instr{Op: OpGoto}, pos) }

// PatchJump makes the jump at index at land on the next instruction emitted.
func (b *Builder) PatchJump(at int) { b.exe.Code[at].Offset = int64(len(b.exe.Code) - at) }

// EndFunc closes the current function.
func (b *Builder) EndFunc() {
	if b.cur < 0 {
		b.errorf("EndFunc without BeginFunc")
		return
	}
	b.exe.Funcs[b.cur].End = len(b.exe.Code)
	b.cur = -1
}

// AddExternal adds an external module; calls of its symbols are
// CallPacked calls.
func (b *Builder) AddExternal(m ExternalModule) { b.exe.External = append(b.exe.External, m) }

// Finish returns the executable, validated.
func (b *Builder) Finish() (*Executable, error) {
	if b.firstErr != nil {
		return nil, b.firstErr
	}
	for i, f := range b.exe.Funcs {
		if f.Kind == FuncVM && !b.emitted[i] {
			return nil, fmt.Errorf("function %q is referenced but never emitted", f.Name)
		}
	}
	exe := b.exe
	if err := exe.Validate(); err != nil {
		return nil, err
	}
	return &exe, nil
}
