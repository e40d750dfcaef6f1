package vm

import (
	"fmt"
	"math"
	"strings"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// ArgString renders an argument as TVM's as_text does: %N, %void, %vm, iN,
// c[N], f[name].
func (e *Executable) ArgString(a Arg) string {
	switch a.Kind() {
	case ArgRegister:
		return regString(a.Value())
	case ArgImmediate:
		return fmt.Sprintf("i%d", a.Value())
	case ArgConstIdx:
		return fmt.Sprintf("c[%d]", a.Value())
	case ArgFuncIdx:
		if v := a.Value(); v >= 0 && v < int64(len(e.Funcs)) {
			return "f[" + e.Funcs[v].Name + "]"
		}
		return fmt.Sprintf("f[#%d]", a.Value())
	}
	return fmt.Sprintf("?%d:%d", a.Kind(), a.Value())
}

func regString(r int64) string {
	switch r {
	case RegVoid:
		return "%void"
	case RegVM:
		return "%vm"
	}
	return fmt.Sprintf("%%%d", r)
}

// InstrString renders one instruction in TVM's as_text layout.
func (e *Executable) InstrString(in *Instr) string {
	switch in.Op {
	case OpCall:
		name := fmt.Sprintf("#%d", in.Func)
		if in.Func >= 0 && in.Func < int64(len(e.Funcs)) {
			name = e.Funcs[in.Func].Name
		}
		args := make([]string, len(in.Args))
		for i, a := range in.Args {
			args[i] = e.ArgString(a)
		}
		return fmt.Sprintf("call  %-16s in: %-12s dst: %s", name, strings.Join(args, ", "), regString(in.Dst))
	case OpRet:
		return "ret   " + regString(in.Reg)
	case OpGoto:
		return fmt.Sprintf("goto  %d", in.Offset)
	case OpIf:
		return fmt.Sprintf("If    %s, %d", regString(in.Reg), in.Offset)
	}
	return fmt.Sprintf("?op%d", in.Op)
}

// Text disassembles the executable: every function of the table in order
// (VM functions with their instructions and source positions), then the
// constant pool and the kernels with their signatures and the size of
// their encoded TIR. TextWith shows the kernels' bodies too.
func (e *Executable) Text() string { return e.TextWith(nil) }

// TextWith is Text with each kernel's body rendered by kernelText (the
// command line decodes the TIR and prints it as TVMScript; the vm package
// cannot, as it does not depend on TIR). An error is shown in the body's
// place. A nil kernelText is Text.
func (e *Executable) TextWith(kernelText func(k *Kernel) (string, error)) string {
	var b strings.Builder
	kidx := e.kernelIndices()
	for _, f := range e.Funcs {
		switch f.Kind {
		case FuncPacked:
			fmt.Fprintf(&b, "@%s packed_func;\n\n", f.Name)
		case FuncKernel:
			fmt.Fprintf(&b, "@%s num_inputs=%d kernel;\n\n", f.Name, kernelArity(e, kidx, f.Name))
		default:
			params := append([]string(nil), f.ParamNames...)
			for i := range params {
				if i < len(f.Sigs) && f.Sigs[i].Annotation != "" {
					params[i] += ": " + f.Sigs[i].Annotation
				}
			}
			fmt.Fprintf(&b, "@%s(%s) registers=%d:\n", f.Name, strings.Join(params, ", "), f.NumRegs)
			for pc := f.Start; pc < f.End && pc < len(e.Code); pc++ {
				line := fmt.Sprintf("  %3d  %s", pc-f.Start, e.InstrString(&e.Code[pc]))
				if p := e.PosOf(pc); p.IsValid() {
					line = fmt.Sprintf("%-76s ; %s", line, p)
				}
				b.WriteString(strings.TrimRight(line, " "))
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "constants (%d):\n", len(e.Constants))
	for i, c := range e.Constants {
		fmt.Fprintf(&b, "  c[%d] = %s\n", i, c.String())
	}
	fmt.Fprintf(&b, "\nkernels (%d):\n", len(e.Kernels))
	for _, k := range e.Kernels {
		params := make([]string, len(k.Params))
		for i, p := range k.Params {
			if p.Kind == abi.ParamBuffer {
				params[i] = fmt.Sprintf("buffer(%s, ndim=%d)", p.DType, p.NDim)
			} else {
				params[i] = p.DType
			}
		}
		ret := ""
		if k.Ret != "" {
			ret = " -> " + k.Ret
		}
		fmt.Fprintf(&b, "  %s(%s)%s\n", k.Name, strings.Join(params, ", "), ret)
		body := fmt.Sprintf("<%d bytes of encoded TIR>", len(k.TIR))
		if kernelText != nil {
			var err error
			if body, err = kernelText(&k); err != nil {
				body = "<cannot show the kernel: " + err.Error() + ">"
			}
		}
		for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
			fmt.Fprintf(&b, "    | %s\n", line)
		}
	}
	if len(e.External) > 0 {
		fmt.Fprintf(&b, "\nexternal modules (%d):\n", len(e.External))
		for _, x := range e.External {
			fmt.Fprintf(&b, "  %s: %s <%d bytes of payload>\n", x.Kind, strings.Join(x.Symbols, ", "), len(x.Payload))
		}
	}
	return b.String()
}

// String renders a constant like TVM's stats(): tensors by dtype and shape
// with their leading values.
func (c *Constant) String() string {
	switch c.Kind {
	case ConstTensor:
		s := fmt.Sprintf("tensor %s%s", c.DType, dimsString(c.Dims))
		if v, err := c.value(); err == nil {
			t, _ := v.Tensor()
			s += " " + Preview(t, 6)
		}
		return s
	case ConstDType:
		return "dtype " + c.DType
	case ConstShape:
		return "shapetuple" + dimsString(c.Dims)
	case ConstString:
		return fmt.Sprintf("%q", c.Str)
	case ConstInt:
		return fmt.Sprint(c.Int)
	case ConstFloat:
		return fmt.Sprint(c.Float)
	}
	return "?"
}

// value materializes a constant as a VM value (tensors get fresh storage).
func (c *Constant) value() (Value, error) {
	switch c.Kind {
	case ConstTensor:
		dt, err := tensor.ParseDType(c.DType)
		if err != nil {
			return Value{}, err
		}
		t := tensor.New(dt, append([]int64(nil), c.Dims...)...)
		if len(t.Bytes()) != len(c.Data) {
			return Value{}, fmt.Errorf("tensor data has %d bytes, want %d", len(c.Data), len(t.Bytes()))
		}
		copy(t.Bytes(), c.Data)
		return TensorValue(t), nil
	case ConstDType:
		dt, err := parseDType(c.DType)
		return DTypeValue(dt), err
	case ConstShape:
		return ShapeValue(append([]int64(nil), c.Dims...)...), nil
	case ConstString:
		return String(c.Str), nil
	case ConstInt:
		return Int(c.Int), nil
	case ConstFloat:
		return Float(c.Float), nil
	}
	return Value{}, fmt.Errorf("unknown constant kind %d", c.Kind)
}

// Preview prints the leading values of a tensor NumPy-style:
// [0.0123 0.9871 ...] (at most n values, flattened).
func Preview(t *tensor.Tensor, n int) string {
	total := int(t.NumElements())
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < total && i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(formatElem(t, i))
	}
	if total > n {
		b.WriteString(" ...")
	}
	b.WriteByte(']')
	return b.String()
}

func formatElem(t *tensor.Tensor, i int) string {
	v := t.Float64At(i)
	switch t.DType {
	case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Sprint(v)
		}
		return fmt.Sprintf("%.4g", v)
	case tensor.Bool:
		if v != 0 {
			return "True"
		}
		return "False"
	}
	return fmt.Sprintf("%d", int64(v))
}

// PlannedStaticBytes sums the alloc_storage calls whose size is a constant
// (the storage StaticPlanBlockMemory planned) over all VM functions: bytes
// and number of allocations per execution of each function once.
func (e *Executable) PlannedStaticBytes() (bytes int64, n int) {
	for i := range e.Code {
		in := &e.Code[i]
		if in.Op != OpCall || in.Func < 0 || in.Func >= int64(len(e.Funcs)) || e.Funcs[in.Func].Name != abi.BuiltinAllocStorage {
			continue
		}
		if len(in.Args) > 1 && in.Args[1].Kind() == ArgConstIdx {
			if c := e.Constants[in.Args[1].Value()]; c.Kind == ConstShape && len(c.Dims) == 1 {
				bytes += c.Dims[0]
				n++
			}
		}
	}
	return bytes, n
}

func kernelArity(e *Executable, kidx map[string]int, name string) int {
	if i, ok := kidx[name]; ok {
		return len(e.Kernels[i].Params)
	}
	return 0
}
