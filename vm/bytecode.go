package vm

import (
	"fmt"

	"github.com/phasec/phasec/vm/abi"
)

// Opcode is one of TVM's four Relax VM instructions (bytecode.h).
type Opcode uint8

const (
	OpCall Opcode = 1 // [1, dst, func_idx, num_args, arg...]
	OpRet  Opcode = 2 // [2, result_reg]
	OpGoto Opcode = 3 // [3, pc_offset]: pc += offset
	OpIf   Opcode = 4 // [4, cond_reg, false_offset]: cond != 0 ? pc++ : pc += offset
)

func (o Opcode) String() string {
	switch o {
	case OpCall:
		return "call"
	case OpRet:
		return "ret"
	case OpGoto:
		return "goto"
	case OpIf:
		return "If"
	}
	return fmt.Sprintf("Opcode(%d)", o)
}

// ArgKind is the top byte of an argument word.
type ArgKind uint8

const (
	ArgRegister  ArgKind = 0 // a register number (or a special register)
	ArgImmediate ArgKind = 1 // an int64 literal within ±(2^55-1)
	ArgConstIdx  ArgKind = 2 // an index into the constant pool
	ArgFuncIdx   ArgKind = 3 // an index into the function table (passes the function itself)
)

// Special registers, as in TVM (kBeginSpecialReg = 1<<54).
const (
	RegVoid int64 = 1 << 54       // %void: as a destination discards; read yields null
	RegVM   int64 = (1 << 54) + 1 // %vm: the VM context, first argument of builtins "with ctx"
)

const (
	argValueBits = 56
	argValueMask = 1<<argValueBits - 1
	// MaxImmediate bounds the magnitude of an immediate argument.
	MaxImmediate = 1<<55 - 1
)

// Arg is an argument word: kind in the top 8 bits, a sign-extended 56-bit value below.
type Arg int64

// MakeArg packs an argument word. The value must fit in 56 signed bits.
func MakeArg(k ArgKind, v int64) Arg {
	return Arg(int64(k)<<argValueBits | v&argValueMask)
}

// RegArg, ImmArg, ConstArg and FuncArg make argument words of each kind;
// Kind, Value, IsReg, IsVMReg and IsVoid take them apart.
func RegArg(r int64) Arg    { return MakeArg(ArgRegister, r) }
func ImmArg(v int64) Arg    { return MakeArg(ArgImmediate, v) }
func ConstArg(i int) Arg    { return MakeArg(ArgConstIdx, int64(i)) }
func FuncArg(i int) Arg     { return MakeArg(ArgFuncIdx, int64(i)) }
func (a Arg) Kind() ArgKind { return ArgKind(uint64(a) >> argValueBits) }
func (a Arg) Value() int64  { return int64(a) << (64 - argValueBits) >> (64 - argValueBits) }
func (a Arg) IsReg() bool   { return a.Kind() == ArgRegister }
func (a Arg) IsVMReg() bool { return a.Kind() == ArgRegister && a.Value() == RegVM }
func (a Arg) IsVoid() bool  { return a.Kind() == ArgRegister && a.Value() == RegVoid }

// Instr is one decoded instruction. Which fields are meaningful depends on Op:
// Call uses Dst, Func and Args; Ret uses Reg; Goto uses Offset; If uses Reg
// and Offset. Offsets count instructions, relative to this one.
type Instr struct {
	Op     Opcode
	Dst    int64
	Func   int64
	Args   []Arg
	Reg    int64
	Offset int64
}

// Pos is a source position (of the Relax binding an instruction implements).
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsValid() {
		return "?"
	}
	file := p.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
}

// FuncKind says what a function-table entry is.
type FuncKind uint8

const (
	FuncPacked FuncKind = 0 // a builtin resolved by name at load time
	FuncVM     FuncKind = 1 // bytecode in this executable
	FuncKernel FuncKind = 2 // a TIR kernel of the kernel section, by name
)

func (k FuncKind) String() string {
	switch k {
	case FuncPacked:
		return "packed_func"
	case FuncVM:
		return "vm_func"
	case FuncKernel:
		return "kernel"
	}
	return fmt.Sprintf("FuncKind(%d)", k)
}

// Function is an entry of the function table. For FuncVM, [Start, End) are
// instruction indices into Executable.Code; parameters occupy registers
// 0..NumArgs-1 of a file of NumRegs registers.
type Function struct {
	Kind       FuncKind
	Name       string
	Start, End int
	NumArgs    int
	NumRegs    int
	ParamNames []string
	// Sigs are the parameters' declared struct info (none, or one per
	// parameter), so that a runner can check and synthesize inputs from
	// the executable alone.
	Sigs []ParamSig
}

// ParamSig is a parameter's declared struct info.
type ParamSig struct {
	Tensor bool
	DType  string   // element type of a tensor; "" if unknown
	NDim   int      // -1 if unknown
	Dims   []string // per dimension: an integer or a symbolic expression; nil if unknown
	// Annotation is the struct info as TVMScript prints it.
	Annotation string
}

// ConstKind tags a constant-pool entry.
type ConstKind uint8

const (
	ConstTensor ConstKind = 0
	ConstDType  ConstKind = 1
	ConstShape  ConstKind = 2
	ConstString ConstKind = 3
	ConstInt    ConstKind = 4
	ConstFloat  ConstKind = 5
)

// Constant is a constant-pool entry; the field matching Kind is set. Dtypes
// are stored by name so that the format does not depend on enum values.
type Constant struct {
	Kind  ConstKind
	DType string  // ConstTensor element type, ConstDType value
	Dims  []int64 // ConstTensor shape, ConstShape value
	Data  []byte  // ConstTensor bytes, row-major little-endian
	Str   string
	Int   int64
	Float float64
}

// Kernel is an entry of the kernel section: a TIR PrimFunc in the compact
// binary form of package ir/tirenc, with the signature the compiler
// recorded for it. The VM never reads TIR: it validates call sites against
// Params, and Options.CompileKernel (vm/loader's decoder and kernel
// compiler) turns TIR into code when the executable is linked.
type Kernel struct {
	Name   string
	TIR    []byte
	Params []abi.Param
	// Ret is the dtype a kernel ending in T.ret returns (host PrimFuncs of
	// ComputePrimValue); "" for the usual destination-passing kernels.
	Ret string
}

// Executable is a self-contained program: the function table, the code, the
// constant pool, the kernels and a source map. It is plain data; New links it
// into a runnable VM. Treat it as immutable once built.
type Executable struct {
	Funcs     []Function
	Code      []Instr
	Pos       []Pos // per instruction, parallel to Code (may be shorter: unknown)
	Constants []Constant
	Kernels   []Kernel
	// External are the external modules (TVM's external_mods): kernels an
	// external codegen compiled, rebuilt at link time by the linker of
	// their kind (Options.LinkExternal) and called as packed functions.
	External []ExternalModule

	validated bool // Validate succeeded (and nothing was supposed to change since)
}

// ExternalModule is one external module of an executable: a kind naming
// the runtime linker that rebuilds it (vm/extern's registry), the packed
// function names it exports, and an opaque payload only that linker reads.
type ExternalModule struct {
	Kind    string
	Symbols []string
	Payload []byte
}

// externalSymbols maps every symbol the external modules export to its
// module index.
func (e *Executable) externalSymbols() map[string]int {
	m := map[string]int{}
	for i, x := range e.External {
		for _, s := range x.Symbols {
			if _, dup := m[s]; !dup {
				m[s] = i
			}
		}
	}
	return m
}

// FuncIndex returns the table index of the function named name, or -1.
func (e *Executable) FuncIndex(name string) int {
	for i := range e.Funcs {
		if e.Funcs[i].Name == name {
			return i
		}
	}
	return -1
}

// kernelIndices maps kernel names to their section index (built once per
// pass over the executable, so lookups stay linear overall).
func (e *Executable) kernelIndices() map[string]int {
	m := make(map[string]int, len(e.Kernels))
	for i := range e.Kernels {
		if _, dup := m[e.Kernels[i].Name]; !dup {
			m[e.Kernels[i].Name] = i
		}
	}
	return m
}

// KernelIndex returns the kernel-section index of name, or -1.
func (e *Executable) KernelIndex(name string) int {
	for i := range e.Kernels {
		if e.Kernels[i].Name == name {
			return i
		}
	}
	return -1
}

// PosOf returns the source position of instruction pc, if recorded.
func (e *Executable) PosOf(pc int) Pos {
	if pc >= 0 && pc < len(e.Pos) {
		return e.Pos[pc]
	}
	return Pos{}
}
