package tirenc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
)

// Encode writes f in the binary form Decode reads. It fails only for what
// the format cannot hold: a Relax value in an attribute, nesting deeper
// than MaxDepth, or a nil PrimFunc.
func Encode(f *ir.PrimFunc) ([]byte, error) {
	if f == nil {
		return nil, fmt.Errorf("nil PrimFunc: %w", ErrUnsupported)
	}
	e := &encoder{vars: map[*ir.PrimVar]int{}, bufs: map[*ir.Buffer]int{}}
	e.buf = append(e.buf, Version)
	e.uv(len(f.Params))
	for _, p := range f.Params {
		e.varRef(p)
	}
	for _, p := range f.Params {
		e.bufRef(f.BufferMap[p])
	}
	e.dtype(f.Ret)
	e.attrs(f.Attrs)
	e.stmt(f.Body)
	if e.err != nil {
		return nil, e.err
	}
	return e.buf, nil
}

type encoder struct {
	buf   []byte
	vars  map[*ir.PrimVar]int
	bufs  map[*ir.Buffer]int
	depth int
	err   error
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format+": %w", append(args, ErrUnsupported)...)
	}
}

// enter counts one nesting level; leave undoes it.
func (e *encoder) enter() bool {
	e.depth++
	if e.depth > MaxDepth {
		e.fail("nesting deeper than %d", MaxDepth)
		return false
	}
	return e.err == nil
}

func (e *encoder) leave() { e.depth-- }

func (e *encoder) byte1(b byte) { e.buf = append(e.buf, b) }
func (e *encoder) uv(n int)     { e.buf = binary.AppendUvarint(e.buf, uint64(n)) }
func (e *encoder) sv(n int64)   { e.buf = binary.AppendVarint(e.buf, n) }
func (e *encoder) str(s string) { e.uv(len(s)); e.buf = append(e.buf, s...) }
func (e *encoder) float(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

func (e *encoder) bool1(b bool) {
	if b {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
}

func (e *encoder) dtype(t ir.DataType) {
	e.byte1(byte(t.Code))
	e.byte1(t.Bits)
	e.uv(int(t.Lanes))
}

func (e *encoder) varRef(v *ir.PrimVar) {
	if v == nil {
		e.uv(refNone)
		return
	}
	if i, ok := e.vars[v]; ok {
		e.uv(refBase + i)
		return
	}
	e.vars[v] = len(e.vars)
	e.uv(refNew)
	e.str(v.Name)
	e.dtype(v.Type)
}

func (e *encoder) bufRef(b *ir.Buffer) {
	if b == nil {
		e.uv(refNone)
		return
	}
	if i, ok := e.bufs[b]; ok {
		e.uv(refBase + i)
		return
	}
	e.bufs[b] = len(e.bufs)
	e.uv(refNew)
	e.str(b.Name)
	e.varRef(b.Data)
	e.dtype(b.DType)
	e.str(b.Scope)
	e.exprs(b.Shape)
	e.exprs(b.Strides)
	e.expr(b.ElemOffset)
	e.sv(int64(b.Align))
	e.sv(int64(b.OffsetFactor))
	e.bool1(b.AutoBroadcast)
	e.uv(len(b.AxisSeparators))
	for _, s := range b.AxisSeparators {
		e.sv(int64(s))
	}
}

func (e *encoder) exprs(xs []ir.PrimExpr) {
	e.uv(len(xs))
	for _, x := range xs {
		e.expr(x)
	}
}

func (e *encoder) expr(x ir.PrimExpr) {
	if x == nil {
		e.byte1(exprNone)
		return
	}
	if !e.enter() {
		return
	}
	defer e.leave()
	switch x := x.(type) {
	case *ir.IntImm:
		e.byte1(exprIntImm)
		e.dtype(x.Type)
		e.sv(x.Value)
	case *ir.FloatImm:
		e.byte1(exprFloatImm)
		e.dtype(x.Type)
		e.float(x.Value)
	case *ir.PrimStr:
		e.byte1(exprStr)
		e.str(x.Value)
	case *ir.PrimVar:
		e.byte1(exprVar)
		e.varRef(x)
	case *ir.Binary:
		e.byte1(exprBinary)
		e.byte1(byte(x.Op))
		e.expr(x.A)
		e.expr(x.B)
	case *ir.Not:
		e.byte1(exprNot)
		e.expr(x.A)
	case *ir.Select:
		e.byte1(exprSelect)
		e.expr(x.Cond)
		e.expr(x.True)
		e.expr(x.False)
	case *ir.Cast:
		e.byte1(exprCast)
		e.dtype(x.Type)
		e.expr(x.Value)
	case *ir.PrimCall:
		e.byte1(exprCall)
		e.str(x.Op)
		e.dtype(x.Type)
		e.exprs(x.Args)
	case *ir.BufferLoad:
		e.byte1(exprLoad)
		e.bufRef(x.Buffer)
		e.exprs(x.Indices)
	default:
		e.fail("expression %T", x)
	}
}

func (e *encoder) rng(r ir.Range) {
	e.expr(r.Min)
	e.expr(r.Extent)
}

func (e *encoder) region(r ir.BufferRegion) {
	e.bufRef(r.Buffer)
	e.uv(len(r.Region))
	for _, x := range r.Region {
		e.rng(x)
	}
}

func (e *encoder) regions(rs []ir.BufferRegion) {
	e.uv(len(rs))
	for _, r := range rs {
		e.region(r)
	}
}

func (e *encoder) stmt(s ir.Stmt) {
	if s == nil {
		e.byte1(stmtNone)
		return
	}
	if !e.enter() {
		return
	}
	defer e.leave()
	switch s := s.(type) {
	case *ir.For:
		e.byte1(stmtFor)
		e.varRef(s.Var)
		e.expr(s.Min)
		e.expr(s.Extent)
		e.byte1(byte(s.Kind))
		e.str(s.ThreadTag)
		e.attrs(s.Annotations)
		e.stmt(s.Body)
	case *ir.BufferStore:
		e.byte1(stmtStore)
		e.bufRef(s.Buffer)
		e.exprs(s.Indices)
		e.expr(s.Value)
	case *ir.SeqStmt:
		e.byte1(stmtSeq)
		e.uv(len(s.Stmts))
		for _, x := range s.Stmts {
			e.stmt(x)
		}
	case *ir.IfThenElse:
		e.byte1(stmtIf)
		e.expr(s.Cond)
		e.stmt(s.Then)
		e.stmt(s.Else)
	case *ir.LetStmt:
		e.byte1(stmtLet)
		e.varRef(s.Var)
		e.expr(s.Value)
		e.stmt(s.Body)
	case *ir.Evaluate:
		e.byte1(stmtEvaluate)
		e.expr(s.Value)
	case *ir.BlockRealize:
		e.byte1(stmtBlockRealize)
		e.exprs(s.IterValues)
		e.expr(s.Predicate)
		e.block(s.Block)
	case *ir.AttrStmt:
		e.byte1(stmtAttr)
		e.varRef(s.Thread)
		e.str(s.Tag)
		e.expr(s.Node)
		e.reducer(s.Reducer)
		e.str(s.Key)
		e.expr(s.Value)
		e.stmt(s.Body)
	case *ir.While:
		e.byte1(stmtWhile)
		e.expr(s.Cond)
		e.stmt(s.Body)
	case *ir.Allocate:
		e.byte1(stmtAllocate)
		e.varRef(s.Data)
		e.dtype(s.DType)
		e.exprs(s.Extents)
		e.str(s.Scope)
		e.expr(s.Condition)
		e.attrs(s.Annotations)
		e.stmt(s.Body)
	case *ir.AllocateConst:
		e.byte1(stmtAllocateConst)
		e.varRef(s.Data)
		e.dtype(s.DType)
		e.exprs(s.Extents)
		e.exprs(s.Values)
		e.stmt(s.Body)
	case *ir.DeclBuffer:
		e.byte1(stmtDeclBuffer)
		e.bufRef(s.Buffer)
		e.stmt(s.Body)
	default:
		e.fail("statement %T", s)
	}
}

func (e *encoder) block(b *ir.Block) {
	if b == nil {
		e.fail("BlockRealize without a Block")
		return
	}
	e.str(b.Name)
	e.uv(len(b.IterVars))
	for _, iv := range b.IterVars {
		e.varRef(iv.Var)
		e.rng(iv.Dom)
		e.byte1(byte(iv.Kind))
	}
	e.regions(b.Reads)
	e.regions(b.Writes)
	e.stmt(b.Init)
	e.stmt(b.Body)
	e.uv(len(b.AllocBuffers))
	for _, x := range b.AllocBuffers {
		e.bufRef(x)
	}
	e.uv(len(b.MatchBuffers))
	for _, m := range b.MatchBuffers {
		e.bufRef(m.Buffer)
		e.region(m.Source)
	}
	e.attrs(b.Annotations)
}

func (e *encoder) reducer(r *ir.CommReducer) {
	if r == nil {
		e.byte1(0)
		return
	}
	e.byte1(1)
	for _, vs := range [][]*ir.PrimVar{r.Lhs, r.Rhs} {
		e.uv(len(vs))
		for _, v := range vs {
			e.varRef(v)
		}
	}
	e.exprs(r.Result)
	e.exprs(r.Identity)
}

func (e *encoder) attrs(a ir.Attrs) {
	keys := a.Keys()
	e.uv(len(keys))
	for _, k := range keys {
		e.str(k)
		e.attrValue(a[k])
	}
}

func (e *encoder) attrValue(v any) {
	if !e.enter() {
		return
	}
	defer e.leave()
	switch v := v.(type) {
	case nil:
		e.byte1(attrNil)
	case bool:
		if v {
			e.byte1(attrTrue)
		} else {
			e.byte1(attrFalse)
		}
	case int64:
		e.byte1(attrInt64)
		e.sv(v)
	case int:
		e.byte1(attrInt)
		e.sv(int64(v))
	case float64:
		e.byte1(attrFloat)
		e.float(v)
	case string:
		e.byte1(attrString)
		e.str(v)
	case ir.DataType:
		e.byte1(attrDType)
		e.dtype(v)
	case ir.PrimExpr:
		e.byte1(attrPrim)
		e.expr(v)
	case []any:
		e.byte1(attrList)
		e.uv(len(v))
		for _, x := range v {
			e.attrValue(x)
		}
	case ir.Attrs:
		e.byte1(attrDict)
		e.attrs(v)
	case *ir.Target:
		e.byte1(attrTarget)
		e.attrs(v.Config)
	case *ir.IndexMap:
		e.byte1(attrIndexMap)
		e.uv(len(v.Params))
		for _, p := range v.Params {
			e.varRef(p)
		}
		e.exprs(v.Results)
	default:
		e.fail("attribute value of type %T", v)
	}
}
