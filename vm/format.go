package vm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/phasec/phasec/vm/abi"
)

// The binary format (all integers little-endian; "uv" is an unsigned and
// "sv" a zig-zag signed varint):
//
//	magic    8 bytes "PHASECVM"
//	version  uint16 (FormatVersion; must match exactly)
//	reserved uint16 (0)
//	length   uint64 of the payload
//	checksum uint32, CRC-32C of the payload
//	payload  seven sections, each: id byte, uv body length, body
//	  1 builtins:  uv n, n strings (names resolved in the builtin registry)
//	  2 kernels:   uv n, per kernel: name, TIR (a string: the PrimFunc encoded by
//	               ir/tirenc, versioned by it), uv nparams, per param: kind byte
//	               (abi.ParamKind), dtype, uv ndim; then the return dtype ("" for none)
//	  3 functions: uv n, per entry: kind byte, then
//	               packed: uv builtin index; kernel: uv kernel index;
//	               vm: name, uv start, uv end, uv nargs, uv nregs, nargs param names,
//	               uv nsigs (0 or nargs), per sig: tensor byte, dtype, sv ndim,
//	               uv ndims, dims as strings, annotation
//	  4 constants: uv n, per constant: tag byte (ConstKind), then
//	               tensor: dtype, uv ndim, ndim uv dims, uv nbytes, bytes; dtype: string;
//	               shape: uv n, n sv; string: string; int: sv; float: 8 bytes IEEE
//	  5 code:      uv n, per instruction: opcode byte, then TVM's words as sv:
//	               call: dst, func, nargs, args; ret: reg; goto: offset; if: cond, offset
//	  6 source:    uv nfiles, file names, uv n (0 or the instruction count),
//	               per instruction: uv file+1 (0 = unknown), uv line, uv col
//	  7 external:  uv n, per module: kind, uv nsymbols, symbols, payload (a string)
//
// A string is uv length then bytes. Decoding checks every count against the
// bytes left before allocating, so a corrupt length cannot exhaust memory.

// Magic starts every executable.
const Magic = "PHASECVM"

// FormatVersion is the version this package writes and reads. Version 2
// stores kernels as encoded TIR (ir/tirenc) instead of TVMScript text;
// version 3 adds the external modules section.
const FormatVersion = 3

const headerSize = 8 + 2 + 2 + 8 + 4

const (
	secBuiltins  = 1
	secKernels   = 2
	secFunctions = 3
	secConstants = 4
	secCode      = 5
	secSource    = 6
	secExternal  = 7
)

var sectionNames = [...]string{"", "builtins", "kernels", "functions", "constants", "code", "source map", "external modules"}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal encodes the executable. It does not validate: Unmarshal does.
func (e *Executable) Marshal() []byte {
	var builtins []string
	builtinIdx := map[string]int{}
	for _, f := range e.Funcs {
		if f.Kind == FuncPacked {
			if _, ok := builtinIdx[f.Name]; !ok {
				builtinIdx[f.Name] = len(builtins)
				builtins = append(builtins, f.Name)
			}
		}
	}
	kidx := e.kernelIndices()
	var payload []byte
	section := func(id byte, body []byte) {
		payload = append(payload, id)
		payload = binary.AppendUvarint(payload, uint64(len(body)))
		payload = append(payload, body...)
	}

	var w []byte
	w = binary.AppendUvarint(w, uint64(len(builtins)))
	for _, b := range builtins {
		w = appendString(w, b)
	}
	section(secBuiltins, w)

	w = nil
	w = binary.AppendUvarint(w, uint64(len(e.Kernels)))
	for _, k := range e.Kernels {
		w = appendString(w, k.Name)
		w = appendString(w, string(k.TIR))
		w = binary.AppendUvarint(w, uint64(len(k.Params)))
		for _, p := range k.Params {
			w = append(w, byte(p.Kind))
			w = appendString(w, p.DType)
			w = binary.AppendUvarint(w, uint64(p.NDim))
		}
		w = appendString(w, k.Ret)
	}
	section(secKernels, w)

	w = nil
	w = binary.AppendUvarint(w, uint64(len(e.Funcs)))
	for _, f := range e.Funcs {
		w = append(w, byte(f.Kind))
		switch f.Kind {
		case FuncPacked:
			w = binary.AppendUvarint(w, uint64(builtinIdx[f.Name]))
		case FuncKernel:
			w = binary.AppendUvarint(w, uint64(kidx[f.Name]))
		default:
			w = appendString(w, f.Name)
			w = binary.AppendUvarint(w, uint64(f.Start))
			w = binary.AppendUvarint(w, uint64(f.End))
			w = binary.AppendUvarint(w, uint64(f.NumArgs))
			w = binary.AppendUvarint(w, uint64(f.NumRegs))
			for i := 0; i < f.NumArgs; i++ {
				name := ""
				if i < len(f.ParamNames) {
					name = f.ParamNames[i]
				}
				w = appendString(w, name)
			}
			w = binary.AppendUvarint(w, uint64(len(f.Sigs)))
			for _, sg := range f.Sigs {
				w = append(w, byte(b2i(sg.Tensor)))
				w = appendString(w, sg.DType)
				w = binary.AppendVarint(w, int64(sg.NDim))
				w = binary.AppendUvarint(w, uint64(len(sg.Dims)))
				for _, d := range sg.Dims {
					w = appendString(w, d)
				}
				w = appendString(w, sg.Annotation)
			}
		}
	}
	section(secFunctions, w)

	w = nil
	w = binary.AppendUvarint(w, uint64(len(e.Constants)))
	for _, c := range e.Constants {
		w = append(w, byte(c.Kind))
		switch c.Kind {
		case ConstTensor:
			w = appendString(w, c.DType)
			w = binary.AppendUvarint(w, uint64(len(c.Dims)))
			for _, d := range c.Dims {
				w = binary.AppendUvarint(w, uint64(d))
			}
			w = binary.AppendUvarint(w, uint64(len(c.Data)))
			w = append(w, c.Data...)
		case ConstDType:
			w = appendString(w, c.DType)
		case ConstShape:
			w = binary.AppendUvarint(w, uint64(len(c.Dims)))
			for _, d := range c.Dims {
				w = binary.AppendVarint(w, d)
			}
		case ConstString:
			w = appendString(w, c.Str)
		case ConstInt:
			w = binary.AppendVarint(w, c.Int)
		case ConstFloat:
			w = binary.LittleEndian.AppendUint64(w, math.Float64bits(c.Float))
		}
	}
	section(secConstants, w)

	w = nil
	w = binary.AppendUvarint(w, uint64(len(e.Code)))
	for _, in := range e.Code {
		w = append(w, byte(in.Op))
		switch in.Op {
		case OpCall:
			w = binary.AppendVarint(w, in.Dst)
			w = binary.AppendVarint(w, in.Func)
			w = binary.AppendVarint(w, int64(len(in.Args)))
			for _, a := range in.Args {
				w = binary.AppendVarint(w, int64(a))
			}
		case OpRet:
			w = binary.AppendVarint(w, in.Reg)
		case OpGoto:
			w = binary.AppendVarint(w, in.Offset)
		case OpIf:
			w = binary.AppendVarint(w, in.Reg)
			w = binary.AppendVarint(w, in.Offset)
		}
	}
	section(secCode, w)

	w = nil
	var files []string
	fileIdx := map[string]int{}
	for _, p := range e.Pos {
		if _, ok := fileIdx[p.File]; !ok && p.IsValid() {
			fileIdx[p.File] = len(files)
			files = append(files, p.File)
		}
	}
	w = binary.AppendUvarint(w, uint64(len(files)))
	for _, f := range files {
		w = appendString(w, f)
	}
	n := len(e.Pos)
	if n != len(e.Code) {
		n = 0 // a partial map is dropped rather than misaligned
	}
	w = binary.AppendUvarint(w, uint64(n))
	for _, p := range e.Pos[:n] {
		if !p.IsValid() {
			w = append(w, 0, 0, 0)
			continue
		}
		w = binary.AppendUvarint(w, uint64(fileIdx[p.File]+1))
		w = binary.AppendUvarint(w, uint64(p.Line))
		w = binary.AppendUvarint(w, uint64(max(p.Col, 0)))
	}
	section(secSource, w)

	w = nil
	w = binary.AppendUvarint(w, uint64(len(e.External)))
	for _, x := range e.External {
		w = appendString(w, x.Kind)
		w = binary.AppendUvarint(w, uint64(len(x.Symbols)))
		for _, s := range x.Symbols {
			w = appendString(w, s)
		}
		w = appendString(w, string(x.Payload))
	}
	section(secExternal, w)

	out := make([]byte, 0, headerSize+len(payload))
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint16(out, FormatVersion)
	out = binary.LittleEndian.AppendUint16(out, 0)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

func appendString(w []byte, s string) []byte {
	w = binary.AppendUvarint(w, uint64(len(s)))
	return append(w, s...)
}

// FormatError is a malformed executable: where and what.
type FormatError struct {
	Section string // "" for the header
	Offset  int    // byte offset in the file
	Msg     string
}

func (e *FormatError) Error() string {
	where := "header"
	if e.Section != "" {
		where = e.Section + " section"
	}
	return fmt.Sprintf("bad executable: %s at byte %d: %s", where, e.Offset, e.Msg)
}

// reader decodes varints from one section, remembering the first error.
type reader struct {
	buf  []byte
	pos  int
	base int // offset of buf in the file, for messages
	sec  string
	err  error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = &FormatError{Section: r.sec, Offset: r.base + r.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *reader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.pos:])
	if n <= 0 {
		r.fail("truncated or overlong varint")
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) sv() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf[r.pos:])
	if n <= 0 {
		r.fail("truncated or overlong varint")
		return 0
	}
	r.pos += n
	return v
}

// small reads an unsigned varint that must be at most limit.
func (r *reader) small(what string, limit int) int {
	v := r.uv()
	if r.err == nil && v > uint64(limit) {
		r.fail("%s %d exceeds %d", what, v, limit)
		return 0
	}
	return int(v)
}

// count reads an element count; each element takes at least minBytes, so a
// count larger than the bytes left is corrupt.
func (r *reader) count(what string, minBytes int) int {
	return r.small(what, (len(r.buf)-r.pos)/max(minBytes, 1))
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.buf) {
		r.fail("truncated")
		return 0
	}
	b := r.buf[r.pos]
	r.pos++
	return b
}

func (r *reader) bytesN(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.buf)-r.pos {
		r.fail("length %d exceeds the %d bytes left", n, len(r.buf)-r.pos)
		return nil
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b
}

func (r *reader) str() string {
	n := r.count("string length", 1)
	return string(r.bytesN(n))
}

func (r *reader) done() {
	if r.err == nil && r.pos != len(r.buf) {
		r.fail("%d trailing bytes", len(r.buf)-r.pos)
	}
}

// maxRegs bounds a function's register file; maxArgs a call's argument count.
const (
	maxRegs = 1 << 20
	maxArgs = 1 << 16
	maxNDim = 64
)

// Unmarshal decodes and validates an executable (see Validate). Any defect is
// an error; nothing in a corrupt input panics or allocates more than a small
// multiple of its size.
func Unmarshal(data []byte) (*Executable, error) {
	if len(data) < headerSize {
		return nil, &FormatError{Msg: fmt.Sprintf("%d bytes is shorter than the %d-byte header", len(data), headerSize)}
	}
	if !bytes.Equal(data[:8], []byte(Magic)) {
		return nil, &FormatError{Msg: fmt.Sprintf("bad magic %q: not a phasec executable", data[:8])}
	}
	if v := binary.LittleEndian.Uint16(data[8:]); v != FormatVersion {
		return nil, &FormatError{Offset: 8, Msg: fmt.Sprintf("format version %d, this build reads version %d: rebuild the executable with this phasec", v, FormatVersion)}
	}
	if r := binary.LittleEndian.Uint16(data[10:]); r != 0 {
		return nil, &FormatError{Offset: 10, Msg: fmt.Sprintf("reserved field is %d, want 0", r)}
	}
	n := binary.LittleEndian.Uint64(data[12:])
	if n != uint64(len(data)-headerSize) {
		return nil, &FormatError{Offset: 12, Msg: fmt.Sprintf("payload length %d, but %d bytes follow the header", n, len(data)-headerSize)}
	}
	payload := data[headerSize:]
	if sum, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(data[20:]); sum != want {
		return nil, &FormatError{Offset: 20, Msg: fmt.Sprintf("checksum mismatch (stored %08x, computed %08x): the file is corrupt", want, sum)}
	}

	e := &Executable{}
	var builtins []string
	top := &reader{buf: payload, base: headerSize}
	for id := byte(1); id <= secExternal; id++ {
		top.sec = sectionNames[id]
		if got := top.byte1(); got != id && top.err == nil {
			top.fail("section id %d, want %d (%s)", got, id, sectionNames[id])
		}
		size := top.count("section length", 1)
		start := top.pos
		body := top.bytesN(size)
		if top.err != nil {
			return nil, top.err
		}
		r := &reader{buf: body, base: headerSize + start, sec: sectionNames[id]}
		switch id {
		case secBuiltins:
			builtins = make([]string, r.count("builtin count", 1))
			for i := range builtins {
				builtins[i] = r.str()
			}
		case secKernels:
			e.Kernels = make([]Kernel, r.count("kernel count", 4))
			for i := range e.Kernels {
				k := &e.Kernels[i]
				k.Name = r.str()
				k.TIR = bytes.Clone(r.bytesN(r.count("kernel TIR length", 1)))
				k.Params = make([]abi.Param, r.count("kernel parameter count", 3))
				for j := range k.Params {
					k.Params[j] = abi.Param{Kind: abi.ParamKind(r.byte1()), DType: r.str(), NDim: r.small("buffer rank", maxNDim)}
				}
				k.Ret = r.str()
			}
		case secFunctions:
			e.Funcs = make([]Function, r.count("function count", 2))
			for i := range e.Funcs {
				f := &e.Funcs[i]
				f.Kind = FuncKind(r.byte1())
				switch f.Kind {
				case FuncPacked:
					if j := r.small("builtin index", len(builtins)); j < len(builtins) {
						f.Name = builtins[j]
					} else {
						r.fail("builtin index %d out of range [0, %d)", j, len(builtins))
					}
				case FuncKernel:
					if j := r.small("kernel index", len(e.Kernels)); j < len(e.Kernels) {
						f.Name = e.Kernels[j].Name
					} else {
						r.fail("kernel index %d out of range [0, %d)", j, len(e.Kernels))
					}
				case FuncVM:
					f.Name = r.str()
					f.Start = r.small("start", math.MaxInt32)
					f.End = r.small("end", math.MaxInt32)
					f.NumArgs = r.count("argument count", 1)
					f.NumRegs = r.small("register count", maxRegs)
					f.ParamNames = make([]string, f.NumArgs)
					for j := range f.ParamNames {
						f.ParamNames[j] = r.str()
					}
					if n := r.count("signature count", 5); n > 0 {
						f.Sigs = make([]ParamSig, n)
					}
					for j := range f.Sigs {
						sg := &f.Sigs[j]
						switch b := r.byte1(); b {
						case 0, 1:
							sg.Tensor = b == 1
						default:
							r.fail("signature %d: tensor flag %d", j, b)
						}
						sg.DType = r.str()
						if sg.NDim = int(r.sv()); sg.NDim < -1 || sg.NDim > maxNDim {
							r.fail("signature %d: rank %d", j, sg.NDim)
						}
						if n := r.count("dimension count", 1); n > 0 {
							sg.Dims = make([]string, n)
						}
						for k := range sg.Dims {
							sg.Dims[k] = r.str()
						}
						sg.Annotation = r.str()
					}
				default:
					r.fail("function %d: unknown kind %d", i, f.Kind)
				}
			}
		case secConstants:
			e.Constants = make([]Constant, r.count("constant count", 2))
			for i := range e.Constants {
				c := &e.Constants[i]
				c.Kind = ConstKind(r.byte1())
				switch c.Kind {
				case ConstTensor:
					c.DType = r.str()
					c.Dims = make([]int64, r.small("tensor rank", maxNDim))
					for j := range c.Dims {
						c.Dims[j] = int64(r.small("dimension", math.MaxInt32))
					}
					c.Data = bytes.Clone(r.bytesN(r.count("tensor byte count", 1)))
				case ConstDType:
					c.DType = r.str()
				case ConstShape:
					c.Dims = make([]int64, r.count("shape rank", 1))
					for j := range c.Dims {
						c.Dims[j] = r.sv()
					}
				case ConstString:
					c.Str = r.str()
				case ConstInt:
					c.Int = r.sv()
				case ConstFloat:
					if b := r.bytesN(8); b != nil {
						c.Float = math.Float64frombits(binary.LittleEndian.Uint64(b))
					}
				default:
					r.fail("constant %d: unknown tag %d", i, c.Kind)
				}
			}
		case secCode:
			e.Code = make([]Instr, r.count("instruction count", 2))
			for i := range e.Code {
				in := &e.Code[i]
				in.Op = Opcode(r.byte1())
				switch in.Op {
				case OpCall:
					in.Dst = r.sv()
					in.Func = r.sv()
					nargs := r.sv()
					if nargs < 0 || nargs > int64(min(maxArgs, len(r.buf)-r.pos)) {
						r.fail("instruction %d: argument count %d", i, nargs)
						nargs = 0
					}
					if nargs > 0 {
						in.Args = make([]Arg, nargs)
					}
					for j := range in.Args {
						in.Args[j] = Arg(r.sv())
					}
				case OpRet:
					in.Reg = r.sv()
				case OpGoto:
					in.Offset = r.sv()
				case OpIf:
					in.Reg = r.sv()
					in.Offset = r.sv()
				default:
					r.fail("instruction %d: unknown opcode %d", i, in.Op)
				}
			}
		case secSource:
			files := make([]string, r.count("file count", 1))
			for i := range files {
				files[i] = r.str()
			}
			n := r.count("source map length", 3)
			if n != 0 && n != len(e.Code) && r.err == nil {
				r.fail("source map has %d entries for %d instructions", n, len(e.Code))
			}
			e.Pos = make([]Pos, n)
			for i := range e.Pos {
				file := r.small("file index", len(files))
				line := r.small("line", math.MaxInt32)
				col := r.small("column", math.MaxInt32)
				if file > 0 {
					e.Pos[i] = Pos{File: files[file-1], Line: line, Col: col}
				} else if line != 0 || col != 0 {
					r.fail("source map entry %d has a position but no file", i)
				}
			}
		case secExternal:
			if n := r.count("external module count", 3); n > 0 {
				e.External = make([]ExternalModule, n)
			}
			for i := range e.External {
				x := &e.External[i]
				x.Kind = r.str()
				x.Symbols = make([]string, r.count("external symbol count", 1))
				for j := range x.Symbols {
					x.Symbols[j] = r.str()
				}
				x.Payload = bytes.Clone(r.bytesN(r.count("external payload length", 1)))
			}
		}
		r.done()
		if r.err != nil {
			return nil, r.err
		}
	}
	top.sec = ""
	top.done()
	if top.err != nil {
		return nil, top.err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// errorList joins validation errors, keeping the first few.
type errorList []error

func (l *errorList) add(format string, args ...any) {
	if len(*l) < 20 {
		*l = append(*l, fmt.Errorf(format, args...))
	}
}

func (l errorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return fmt.Errorf("invalid executable: %w", errors.Join(l...))
}
