package ir

import "github.com/phasec/phasec/diag"

// Expr is a Relax expression.
//
// Nodes are immutable once normalized: a pass that changes something builds
// new nodes (the Mutator copies only along the changed path) and shares the
// rest. The only late-bound field is the struct info, which the normalizer
// fills exactly once, bottom-up.
type Expr interface {
	Span() diag.Span
	// StructInfo is nil until the node has been normalized (and always nil
	// for *Op).
	StructInfo() StructInfo
	expr()
}

type exprBase struct {
	span  diag.Span
	sinfo StructInfo
}

func (b *exprBase) Span() diag.Span        { return b.span }
func (b *exprBase) SetSpan(s diag.Span)    { b.span = s }
func (b *exprBase) StructInfo() StructInfo { return b.sinfo }
func (*exprBase) expr()                    {}

// SetStructInfo records inferred (or annotated) struct info. Only the
// normalizer and node constructors should call it.
func (b *exprBase) SetStructInfo(s StructInfo) { b.sinfo = s }

// Var is a Relax variable, bound by a function parameter or a binding. Its
// identity is the pointer; Name is only a hint for printing. A dataflow var
// (Dataflow true) is legal only inside a dataflow block and does not escape it.
// A Var's struct info is its declared (or inferred) info.
type Var struct {
	exprBase
	Name     string
	Dataflow bool
}

// NewVar returns a fresh variable with the given struct info (may be nil).
func NewVar(name string, sinfo StructInfo) *Var {
	v := &Var{Name: name}
	v.sinfo = sinfo
	return v
}

// NewDataflowVar returns a fresh dataflow variable.
func NewDataflowVar(name string, sinfo StructInfo) *Var {
	v := NewVar(name, sinfo)
	v.Dataflow = true
	return v
}

// Constant is a tensor literal.
type Constant struct {
	exprBase
	Data *NDArray
}

// ShapeExpr is a first-class shape value (R.shape([...])); values are int64.
type ShapeExpr struct {
	exprBase
	Values []PrimExpr
}

// PrimValue is a TIR scalar used as a Relax value (R.prim_value).
type PrimValue struct {
	exprBase
	Value PrimExpr
}

// StringImm is a string value (R.str).
type StringImm struct {
	exprBase
	Value string
}

// DataTypeImm is a dtype value (R.dtype).
type DataTypeImm struct {
	exprBase
	Value DataType
}

// Tuple groups values.
type Tuple struct {
	exprBase
	Fields []Expr
}

// TupleGetItem projects a field of a tuple.
type TupleGetItem struct {
	exprBase
	Tuple Expr
	Index int
}

// Call applies Op (an *Op, *GlobalVar, *ExternFunc or closure *Var) to Args.
// Attrs holds the op's attributes (axis, keepdims, ...); SInfoArgs the
// explicit output struct info that some ops need (call_tir's out_sinfo,
// call_packed's sinfo_args).
type Call struct {
	exprBase
	Op        Expr
	Args      []Expr
	Attrs     Attrs
	SInfoArgs []StructInfo
}

// If is a conditional expression; both branches are SeqExprs once normalized.
type If struct {
	exprBase
	Cond Expr
	Then Expr
	Else Expr
}

// SeqExpr is a scope: binding blocks followed by a result. It appears only as
// a function body or an If branch once normalized.
type SeqExpr struct {
	exprBase
	Blocks []*BindingBlock
	Body   Expr
}

// Function is a Relax function. At module level it is a global function;
// inside a body (before LambdaLift) it is a local function or closure.
type Function struct {
	exprBase
	Params []*Var
	Body   Expr // a *SeqExpr once normalized
	Ret    StructInfo
	Pure   bool
	Attrs  Attrs
}

func (f *Function) FuncAttrs() Attrs { return f.Attrs }
func (*Function) baseFunc()          {}

// GlobalVar names a function of the enclosing module. Two GlobalVars are the
// same reference when their names are equal.
type GlobalVar struct {
	exprBase
	Name string
}

// ExternFunc is a packed function resolved by name at run time.
type ExternFunc struct {
	exprBase
	Symbol string
}

// An ExternFunc is also a module member: TVMScript's
// "name = R.ExternFunc(\"symbol\")" in the module class (TVM's ir parser
// declares and defines it as a global function; cls.name refers to it).
func (*ExternFunc) baseFunc()        {}
func (*ExternFunc) FuncAttrs() Attrs { return nil }

// Binding binds a variable in a block.
type Binding interface {
	Span() diag.Span
	// BoundVar is the variable the binding defines.
	BoundVar() *Var
	binding()
}

type bindingBase struct{ span diag.Span }

func (b *bindingBase) Span() diag.Span     { return b.span }
func (b *bindingBase) SetSpan(s diag.Span) { b.span = s }
func (*bindingBase) binding()              {}

// VarBinding is "Var = Value".
type VarBinding struct {
	bindingBase
	Var   *Var
	Value Expr
}

func (b *VarBinding) BoundVar() *Var { return b.Var }

// MatchCast is "Var = R.match_cast(Value, SInfo)": a run-time check that
// refines Value to SInfo, defining the symbolic variables SInfo introduces.
type MatchCast struct {
	bindingBase
	Var   *Var
	Value Expr
	SInfo StructInfo
}

func (b *MatchCast) BoundVar() *Var { return b.Var }

// BindingBlock is an ordered list of bindings. A dataflow block holds only
// pure calls and no control flow; its dataflow vars are scoped to it.
type BindingBlock struct {
	Bindings []Binding
	Dataflow bool
	span     diag.Span
}

func (b *BindingBlock) Span() diag.Span     { return b.span }
func (b *BindingBlock) SetSpan(s diag.Span) { b.span = s }

// Leaf constructors.

// NewShapeExpr returns R.shape(values).
func NewShapeExpr(values ...PrimExpr) *ShapeExpr {
	if values == nil {
		values = []PrimExpr{}
	}
	return &ShapeExpr{Values: values}
}

// NewPrimValue returns R.prim_value(v).
func NewPrimValue(v PrimExpr) *PrimValue { return &PrimValue{Value: v} }

// NewStringImm returns R.str(s).
func NewStringImm(s string) *StringImm { return &StringImm{Value: s} }

// NewDataTypeImm returns R.dtype(t).
func NewDataTypeImm(t DataType) *DataTypeImm { return &DataTypeImm{Value: t} }

// NewTuple returns a tuple of the fields.
func NewTuple(fields ...Expr) *Tuple {
	if fields == nil {
		fields = []Expr{}
	}
	return &Tuple{Fields: fields}
}

// NewCall returns a call with no attributes or sinfo args.
func NewCall(op Expr, args ...Expr) *Call { return &Call{Op: op, Args: args} }

// NewGlobalVar returns a reference to the module function name.
func NewGlobalVar(name string) *GlobalVar { return &GlobalVar{Name: name} }

// NewExternFunc returns a reference to the packed function symbol.
func NewExternFunc(symbol string) *ExternFunc { return &ExternFunc{Symbol: symbol} }

// NewVarBinding returns "v = value".
func NewVarBinding(v *Var, value Expr) *VarBinding { return &VarBinding{Var: v, Value: value} }

// NewMatchCast returns "v = R.match_cast(value, sinfo)".
func NewMatchCast(v *Var, value Expr, sinfo StructInfo) *MatchCast {
	return &MatchCast{Var: v, Value: value, SInfo: sinfo}
}

// IsLeaf reports whether e may appear as a call argument in A-normal form
// without being bound first: variables, constants, and the other leaf values,
// GlobalVar, ExternFunc and Op.
func IsLeaf(e Expr) bool {
	switch e.(type) {
	case *Var, *Constant, *ShapeExpr, *PrimValue, *StringImm, *DataTypeImm,
		*GlobalVar, *ExternFunc, *Op:
		return true
	}
	return false
}

// IsLeafOrTuple reports whether e is a leaf or a tuple whose fields are
// (recursively) leaves or tuples: the operand form A-normal form allows.
func IsLeafOrTuple(e Expr) bool {
	if t, ok := e.(*Tuple); ok {
		for _, f := range t.Fields {
			if !IsLeafOrTuple(f) {
				return false
			}
		}
		return true
	}
	return IsLeaf(e)
}
