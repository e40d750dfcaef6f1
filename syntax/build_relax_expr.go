package syntax

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Relax expressions.

// relaxExpr converts an expression in a Relax value position.
func (bd *builder) relaxExpr(a *ast) ir.Expr {
	var e ir.Expr
	switch a.Kind {
	case aName:
		e = bd.relaxName(a)
	case aAttr:
		e = bd.globalRef(a)
	case aCall:
		e = bd.relaxCall(a)
	case aInt, aFloat:
		e = bd.literalValue(a, false)
	case aConst:
		switch a.Text {
		case "True", "False":
			e = ir.NewPrimValue(ir.NewBool(a.Text == "True"))
		default:
			bd.fail(a.Span, "expected a Relax value, found None (use R.null_value())")
		}
	case aStr:
		e = ir.NewStringImm(a.Text)
	case aTuple, aList:
		fields := make([]ir.Expr, len(a.Items))
		for i, it := range a.Items {
			fields[i] = bd.relaxExpr(it)
		}
		e = ir.NewTuple(fields...)
	case aIndex:
		e = bd.relaxIndex(a)
	case aUnary:
		if a.Name == "-" && (a.X.Kind == aInt || a.X.Kind == aFloat) {
			e = bd.literalValue(a.X, true)
			break
		}
		e = bd.relaxOperator(a)
	case aBinary:
		e = bd.relaxOperator(a)
	default:
		bd.fail(a.Span, "expected a Relax value, found %s", a.describe())
	}
	setSpan(e, a)
	return e
}

// setSpan records the source span on a freshly built node (never on a
// shared one such as a variable reference).
func setSpan(e ir.Expr, a *ast) {
	switch e.(type) {
	case *ir.Var, *ir.Op:
		return
	}
	if s, ok := e.(interface{ SetSpan(diag.Span) }); ok && !e.Span().IsValid() {
		s.SetSpan(a.Span)
	}
}

func (bd *builder) relaxName(a *ast) ir.Expr {
	s := bd.lookup(a.Name)
	switch {
	case s == nil:
		if _, isFunc := bd.funcs[a.Name]; isFunc {
			bd.fail(a.Span, "undefined variable %s (refer to the module function as cls.%s)", a.Name, a.Name)
		}
		bd.undefined(a, "variable")
	case s.poison:
		bd.skip()
	case s.relax != nil:
		return s.relax
	case s.prim != nil:
		return ir.NewPrimValue(s.prim)
	case s.module:
		bd.fail(a.Span, "expected a value, found the module alias %s (use %s.<function>)", a.Name, a.Name)
	}
	bd.fail(a.Span, "expected a Relax value, found %s", a.Name)
	return nil
}

// isModuleRef reports whether a names the module: its class name or a
// "cls = Module" alias.
func (bd *builder) isModuleRef(a *ast) bool {
	if a.Kind != aName {
		return false
	}
	if s := bd.lookup(a.Name); s != nil {
		return s.module
	}
	return a.Name == bd.modName && bd.modName != ""
}

// globalRef converts cls.f / Module.f into a GlobalVar.
func (bd *builder) globalRef(a *ast) ir.Expr {
	if !bd.isModuleRef(a.X) {
		d, _ := a.Dotted()
		if strings.HasPrefix(d, "R.") {
			if _, ok := sinfoNames[strings.TrimPrefix(d, "R.")]; ok {
				bd.fail(a.Span, "expected a Relax value, found the struct info %s", d)
			}
			bd.fail(a.Span, "expected a Relax value, found %s (call it: %s(...))", d, d)
		}
		if a.X.Kind == aName && bd.lookup(a.X.Name) == nil {
			bd.undefined(a.X, "name")
		}
		bd.fail(a.Span, "expected a Relax value, found %s", describeOrName(a))
	}
	if _, ok := bd.funcs[a.Name]; !ok {
		if bd.poisonedFunc(a.Name) {
			bd.skip()
		}
		bd.fail(a.Span, "undefined module function %s%s", a.Name, didYouMean(a.Name, slices.Sorted(maps.Keys(bd.funcs)), a.X.Name+"."))
	}
	return ir.NewGlobalVar(a.Name)
}

// literalValue wraps a number in R.prim_value: int64 for integers, float32
// for floats (tir.const's default).
func (bd *builder) literalValue(a *ast, neg bool) ir.Expr {
	switch v := bd.number(a, neg).(type) {
	case int64:
		return ir.NewPrimValue(ir.I64(v))
	case float64:
		return ir.NewPrimValue(ir.NewFloat(ir.Float32, v))
	}
	return nil
}

func (bd *builder) relaxIndex(a *ast) ir.Expr {
	if a.X.Kind == aIndex && a.X.X.Kind == aName && a.X.X.Name == "metadata" && bd.lookup("metadata") == nil {
		return bd.metadataConstant(a)
	}
	if len(a.Items) != 1 || a.Items[0].Kind != aInt {
		bd.fail(a.Span, "expected a tuple index with one integer literal (t[0]), found %s", describeIndex(a))
	}
	i, err := strconv.Atoi(a.Items[0].Text)
	if err != nil {
		bd.fail(a.Items[0].Span, "tuple index %s out of range", a.Items[0].Text)
	}
	g := &ir.TupleGetItem{Tuple: bd.relaxExpr(a.X), Index: i}
	return g
}

func describeIndex(a *ast) string {
	if len(a.Items) != 1 {
		return fmt.Sprintf("%d indices", len(a.Items))
	}
	return a.Items[0].describe()
}

// relaxOperators maps Python operators on Relax values to ops.
var relaxOperators = map[string]string{
	"+": "relax.add", "-": "relax.subtract", "*": "relax.multiply", "/": "relax.divide",
	"//": "relax.floor_divide", "%": "relax.floor_mod", "**": "relax.power",
	"<": "relax.less", "<=": "relax.less_equal", ">": "relax.greater", ">=": "relax.greater_equal",
	"==": "relax.equal", "!=": "relax.not_equal", "&": "relax.bitwise_and", "|": "relax.bitwise_or",
	"^": "relax.bitwise_xor", "and": "relax.logical_and", "or": "relax.logical_or",
}

// relaxOperator converts an operator expression. Over symbolic variables
// only it is a PrimValue of the TIR expression; otherwise the operator maps
// to the corresponding op (x + y is R.add(x, y)).
func (bd *builder) relaxOperator(a *ast) ir.Expr {
	if bd.primOnly(a) {
		saved := bd.intType
		bd.intType = ir.Int64
		defer func() { bd.intType = saved }()
		return ir.NewPrimValue(bd.prim(a))
	}
	var name string
	var args []ir.Expr
	if a.Kind == aUnary {
		switch a.Name {
		case "-":
			name = "relax.negative"
		case "not":
			name = "relax.logical_not"
		case "~":
			name = "relax.bitwise_not"
		case "+":
			return bd.relaxExpr(a.X)
		}
		args = []ir.Expr{bd.relaxExpr(a.X)}
	} else {
		name = relaxOperators[a.Name]
		args = []ir.Expr{bd.relaxExpr(a.X), bd.relaxExpr(a.Y)}
	}
	op, ok := ir.LookupOp(name)
	if !ok {
		bd.fail(a.Span, "operator %s on Relax values needs op %s, which is not registered", a.Name, name)
	}
	return ir.NewCall(op, args...)
}

// primOnly reports whether every name in a is a symbolic variable (so the
// expression is a TIR expression, not a Relax computation).
func (bd *builder) primOnly(a *ast) bool {
	switch a.Kind {
	case aName:
		s := bd.lookup(a.Name)
		return s != nil && s.prim != nil
	case aInt, aFloat:
		return true
	case aUnary:
		return bd.primOnly(a.X)
	case aBinary:
		return bd.primOnly(a.X) && bd.primOnly(a.Y)
	case aCall:
		return strings.HasPrefix(a.callee(), "T.")
	}
	return false
}
