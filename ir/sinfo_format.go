package ir

import "strconv"

// FormatStructInfo prints s as TVMScript (R.Tensor((n, 4), dtype="float32")).
//
// The forms are exactly those of TVM v0.23's printer
// (src/script/printer/relax/struct_info.cc), which fixes argument order:
//
//	R.Object
//	R.Prim("int64")             R.Prim(value=n)
//	R.Shape([n, 4])             R.Shape(ndim=3)          R.Shape(ndim=-1)
//	R.Tensor((n, 4), dtype="float32")   R.Tensor((n, 4))   R.Tensor(s, dtype="float32")
//	R.Tensor(dtype="float32", ndim=2)   R.Tensor(ndim=2)   R.Tensor(dtype="float32")
//	R.Tensor
//	R.Tuple(A, B)               R.Tuple(A)               R.Tuple
//	R.Callable((A, B), R, True) R.Callable((), R.Object, False)
//	R.Callable()  R.Callable(ret=R, purity=False)        (opaque)
//
// Note that for a tensor of unknown shape the printer puts dtype before
// ndim (the reference's "R.Tensor(ndim=2, dtype=...)" is an accepted input
// spelling, not what TVM prints), and an unknown-rank shape prints as
// R.Shape(ndim=-1), not bare R.Shape. Dimensions are printed with FormatPrim;
// name names symbolic variables (nil: their Name). Shape vars used as a
// tensor's shape print by their Name.
func FormatStructInfo(s StructInfo, name func(*PrimVar) string) string {
	return FormatStructInfoWith(s, name, nil)
}

// FormatStructInfoWith is FormatStructInfo with a namer for Relax vars (a
// tensor's shape var); a nil namer uses Var.Name.
func FormatStructInfoWith(s StructInfo, prim func(*PrimVar) string, rvar func(*Var) string) string {
	return string(SInfoFormat{Spell: namers{prim, rvar}}.Append(nil, s))
}

// SInfoSpeller spells the parts of struct info that a printer names its own
// way; the forms around them are SInfoFormat's.
type SInfoSpeller interface {
	// AppendDim appends a dimension of a shape or a prim value.
	AppendDim(b []byte, e PrimExpr) []byte
	// AppendShape appends a tensor's shape given by an expression other
	// than a literal ShapeExpr (usually a shape var).
	AppendShape(b []byte, e Expr) []byte
}

// SInfoFormat prints struct info in the forms of FormatStructInfo, with
// dimensions and shape expressions spelled by Spell.
type SInfoFormat struct {
	Spell SInfoSpeller // nil: FormatPrim and FormatExpr with plain names
	// Missing spells an absent (nil) struct info; "" means "None".
	Missing string
	// VDevices is the module's device list, which spells a tensor's
	// virtual device ("cuda:0"); a device not in it prints as "kind:-1",
	// and with no list the device prints as its I.vdevice(...) call.
	VDevices []*VDevice
}

// Append appends s to b.
func (f SInfoFormat) Append(b []byte, s StructInfo) []byte {
	if f.Spell == nil {
		f.Spell = namers{}
	}
	switch x := s.(type) {
	case nil:
		if f.Missing == "" {
			return append(b, "None"...)
		}
		return append(b, f.Missing...)
	case *ObjectInfo:
		b = append(b, "R.Object"...)
	case *PrimInfo:
		if x.Value != nil {
			b = append(b, "R.Prim(value="...)
			b = f.Spell.AppendDim(b, x.Value)
		} else {
			b = append(b, "R.Prim("...)
			b = strconv.AppendQuote(b, x.DType.String())
		}
		b = append(b, ')')
	case *ShapeInfo:
		if x.Known() {
			b = append(b, "R.Shape(["...)
			b = f.dims(b, x.Values)
			b = append(b, "])"...)
		} else {
			b = append(b, "R.Shape(ndim="...)
			b = strconv.AppendInt(b, int64(x.NDim), 10)
			b = append(b, ')')
		}
	case *TensorInfo:
		b = append(b, "R.Tensor"...)
		hasShape := x.Shape != nil
		hasDType := !x.DType.IsVoid()
		hasNDim := !hasShape && x.NDim >= 0
		if !hasShape && !hasDType && !hasNDim && x.VDevice == nil {
			return b
		}
		b = append(b, '(')
		if hasShape {
			if sh, ok := x.Shape.(*ShapeExpr); ok {
				b = append(b, '(')
				b = f.dims(b, sh.Values)
				if len(sh.Values) == 1 {
					b = append(b, ',')
				}
				b = append(b, ')')
			} else {
				b = f.Spell.AppendShape(b, x.Shape)
			}
		}
		if hasDType {
			if hasShape {
				b = append(b, ", "...)
			}
			b = append(b, "dtype="...)
			b = strconv.AppendQuote(b, x.DType.String())
		}
		if hasNDim {
			if hasDType {
				b = append(b, ", "...)
			}
			b = append(b, "ndim="...)
			b = strconv.AppendInt(b, int64(x.NDim), 10)
		}
		if x.VDevice != nil {
			// TVM prints the device as a keyword naming it by kind and
			// position among the module's devices of that kind.
			if hasShape || hasDType || hasNDim {
				b = append(b, ", "...)
			}
			b = append(b, "vdevice="...)
			if f.VDevices == nil {
				// Without the module's list (diagnostics), spell the
				// device itself.
				b = append(b, x.VDevice.String()...)
			} else {
				b = strconv.AppendQuote(b, VDeviceRef(f.VDevices, x.VDevice))
			}
		}
		b = append(b, ')')
	case *TupleInfo:
		b = append(b, "R.Tuple"...)
		if len(x.Fields) > 0 {
			b = append(b, '(')
			b = f.list(b, x.Fields)
			b = append(b, ')')
		}
	case *FuncInfo:
		b = append(b, "R.Callable("...)
		if x.Opaque {
			hasRet := false
			if _, obj := x.Ret.(*ObjectInfo); x.Ret != nil && !obj {
				b = append(b, "ret="...)
				b = f.Append(b, x.Ret)
				hasRet = true
			}
			if !x.Pure {
				if hasRet {
					b = append(b, ", "...)
				}
				b = append(b, "purity=False"...)
			}
			return append(b, ')')
		}
		b = append(b, '(')
		b = f.list(b, x.Params)
		if len(x.Params) == 1 {
			b = append(b, ',')
		}
		b = append(b, "), "...)
		ret := x.Ret
		if ret == nil {
			ret = Object()
		}
		b = f.Append(b, ret)
		if x.Pure {
			b = append(b, ", True)"...)
		} else {
			b = append(b, ", False)"...)
		}
	}
	return b
}

func (f SInfoFormat) dims(b []byte, vals []PrimExpr) []byte {
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = f.Spell.AppendDim(b, v)
	}
	return b
}

func (f SInfoFormat) list(b []byte, l []StructInfo) []byte {
	for i, s := range l {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = f.Append(b, s)
	}
	return b
}

// namers is the SInfoSpeller of FormatStructInfoWith: dimensions by
// FormatPrim, a shape var by its name, other shapes by FormatExpr.
type namers struct {
	prim func(*PrimVar) string
	rvar func(*Var) string
}

func (n namers) AppendDim(b []byte, e PrimExpr) []byte {
	return append(b, FormatPrim(e, n.prim)...)
}

func (n namers) AppendShape(b []byte, e Expr) []byte {
	if v, ok := e.(*Var); ok {
		if n.rvar != nil {
			return append(b, n.rvar(v)...)
		}
		return append(b, v.Name...)
	}
	return append(b, FormatExpr(e, n.rvar)...)
}

func (s *ObjectInfo) String() string { return FormatStructInfo(s, nil) }
func (s *PrimInfo) String() string   { return FormatStructInfo(s, nil) }
func (s *ShapeInfo) String() string  { return FormatStructInfo(s, nil) }
func (s *TensorInfo) String() string { return FormatStructInfo(s, nil) }
func (s *TupleInfo) String() string  { return FormatStructInfo(s, nil) }
func (s *FuncInfo) String() string   { return FormatStructInfo(s, nil) }
