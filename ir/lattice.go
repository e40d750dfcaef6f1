package ir

// The StructInfo lattice, after TVM's src/relax/analysis/struct_info_analysis.cc.
//
// ObjectInfo is the top. A base check grades how far "base" is from being a
// superset of "derived" (FailL0 < FailL1 < FailL2 < Pass, so combining the
// checks of several parts takes the minimum). Symbolic dimensions are compared
// with CanProveEqual: two distinct constants are an L0 failure, anything
// unprovable is L2, the level the run-time checks are responsible for.
//
// This file holds the base check; lattice_lca.go the join, lattice_erase.go
// the scope erasure and lattice_derive.go call-return derivation.

import "reflect"

// BaseCheckResult grades StructInfoBaseCheck.
type BaseCheckResult uint8

const (
	FailL0 BaseCheckResult = iota // value sets cannot intersect
	FailL1                        // not a superset by static information
	FailL2                        // unprovable symbolic mismatch only
	Pass                          // provably a superset
)

var baseCheckNames = [...]string{FailL0: "FailL0", FailL1: "FailL1", FailL2: "FailL2", Pass: "Pass"}

func (r BaseCheckResult) String() string {
	if int(r) < len(baseCheckNames) {
		return baseCheckNames[r]
	}
	return "BaseCheckResult(?)"
}

// StructInfoBaseCheck grades whether base describes a superset of derived.
func StructInfoBaseCheck(base, derived StructInfo) BaseCheckResult {
	var c baseChecker
	return c.check(base, derived)
}

// IsBaseOf reports StructInfoBaseCheck(base, derived) == Pass.
func IsBaseOf(base, derived StructInfo) bool { return StructInfoBaseCheck(base, derived) == Pass }

// baseChecker is the base check; with bind set it is also the matcher of
// DeriveCallRetStructInfo, which binds the callee's symbolic parameters the
// first time they stand alone as a dimension (or a PrimInfo value).
type baseChecker struct {
	bind     bool
	primBind map[*PrimVar]PrimExpr
	varBind  map[*Var]Expr
}

func combineCheck(a, b BaseCheckResult) BaseCheckResult { return min(a, b) }

// kindMismatch grades a base of one kind against derived info of another:
// an Object might still hold a value of the base's kind (L1), anything else
// cannot (L0).
func kindMismatch(derived StructInfo) BaseCheckResult {
	if _, ok := derived.(*ObjectInfo); ok {
		return FailL1
	}
	return FailL0
}

func (c *baseChecker) check(base, derived StructInfo) BaseCheckResult {
	if base == nil || derived == nil {
		// Missing info is treated as Object on either side.
		if base == nil {
			return Pass
		}
		derived = Object()
	}
	if base == derived && !c.bind {
		return Pass
	}
	switch b := base.(type) {
	case *ObjectInfo:
		return Pass
	case *PrimInfo:
		d, ok := derived.(*PrimInfo)
		if !ok {
			return kindMismatch(derived)
		}
		if b.DType != d.DType {
			return FailL0
		}
		if b.Value == nil {
			return Pass
		}
		if d.Value == nil {
			return FailL2
		}
		return c.primMatch(b.Value, d.Value)
	case *ShapeInfo:
		d, ok := derived.(*ShapeInfo)
		if !ok {
			return kindMismatch(derived)
		}
		if b.NDim < 0 {
			return Pass
		}
		if b.NDim != d.NDim {
			if d.NDim < 0 {
				return FailL1
			}
			return FailL0
		}
		if !b.Known() {
			return Pass
		}
		if !d.Known() {
			return FailL2
		}
		return c.dimsMatch(b.Values, d.Values)
	case *TensorInfo:
		d, ok := derived.(*TensorInfo)
		if !ok {
			return kindMismatch(derived)
		}
		if !b.DType.IsVoid() && b.DType != d.DType {
			if d.DType.IsVoid() {
				return FailL1
			}
			return FailL0
		}
		if b.NDim >= 0 && b.NDim != d.NDim {
			if d.NDim < 0 {
				return FailL1
			}
			return FailL0
		}
		// Virtual devices as TVM's StructInfoBaseCheck
		// (src/relax/analysis/struct_info_analysis.cc): a device on the
		// base only is not provable statically, two different ones never
		// meet.
		if b.VDevice != nil {
			if d.VDevice == nil {
				return FailL1
			}
			if !b.VDevice.Equal(d.VDevice) {
				return FailL0
			}
		}
		if b.Shape == nil {
			return Pass
		}
		if d.Shape == nil {
			return FailL2
		}
		return c.shapeMatch(b.Shape, d.Shape)
	case *TupleInfo:
		d, ok := derived.(*TupleInfo)
		if !ok {
			return kindMismatch(derived)
		}
		return c.listCheck(b.Fields, d.Fields)
	case *FuncInfo:
		d, ok := derived.(*FuncInfo)
		if !ok {
			return kindMismatch(derived)
		}
		// A pure function may stand where an impure one is expected, not
		// the other way round.
		if b.Pure && !d.Pure {
			return FailL0
		}
		if b.Opaque {
			if b.Derive != nil {
				// Best effort, as in TVM: only the same derivation passes.
				if sameFunc(b.Derive, d.Derive) {
					return Pass
				}
				return FailL2
			}
			return c.check(b.Ret, d.Ret)
		}
		if d.Opaque {
			return FailL2
		}
		// Parameters may name their symbolic variables differently; equal
		// signatures pass outright. Otherwise check elementwise without
		// renaming (best effort), counting static parameter mismatches as
		// L2, as TVM does.
		if StructuralEqual(b, d, EqualOptions{}) {
			return Pass
		}
		params := c.funcParamsCheck(b.Params, d.Params)
		return combineCheck(params, c.check(b.Ret, d.Ret))
	}
	return FailL0
}

func (c *baseChecker) funcParamsCheck(b, d []StructInfo) BaseCheckResult {
	// Symbolic variables inside a function-typed parameter are that
	// function's own; never bind them.
	bind := c.bind
	c.bind = false
	r := c.listCheck(b, d)
	c.bind = bind
	if r == FailL1 {
		r = FailL2
	}
	return r
}

func (c *baseChecker) listCheck(b, d []StructInfo) BaseCheckResult {
	if len(b) != len(d) {
		return FailL0
	}
	r := Pass
	for i := range b {
		r = combineCheck(r, c.check(b[i], d[i]))
		if r == FailL0 {
			return r
		}
	}
	return r
}

// primMatch compares one symbolic value of base against derived. In binding
// mode a bare variable of the base is bound on first sight; later sightings
// must be provably equal to the binding.
func (c *baseChecker) primMatch(b, d PrimExpr) BaseCheckResult {
	if c.bind {
		if v, ok := b.(*PrimVar); ok {
			if prev, seen := c.primBind[v]; seen {
				if CanProveEqual(prev, d) {
					return Pass
				}
				return FailL2
			}
			if c.primBind == nil {
				c.primBind = map[*PrimVar]PrimExpr{}
			}
			c.primBind[v] = d
			return Pass
		}
		// A compound parameter dimension (n + 1) may depend on a variable
		// bound later; do not substitute, just compare.
	}
	x, ok1 := IntValue(b)
	y, ok2 := IntValue(d)
	if ok1 && ok2 {
		if x == y {
			return Pass
		}
		return FailL0
	}
	if CanProveEqual(b, d) {
		return Pass
	}
	return FailL2
}

func (c *baseChecker) dimsMatch(b, d []PrimExpr) BaseCheckResult {
	if len(b) != len(d) {
		return FailL0
	}
	r := Pass
	for i := range b {
		x := c.primMatch(b[i], d[i])
		if x == FailL0 {
			return x
		}
		r = combineCheck(r, x)
	}
	return r
}

// shapeMatch compares tensor shapes: ShapeExprs dimensionwise, a shape var
// by identity (or, binding, by binding it). A var whose info has known values
// is compared through them.
func (c *baseChecker) shapeMatch(b, d Expr) BaseCheckResult {
	if b == d && !c.bind {
		return Pass
	}
	if c.bind {
		if v, ok := b.(*Var); ok {
			if prev, seen := c.varBind[v]; seen {
				if shapesProvablyEqual(prev, d) {
					return Pass
				}
				return FailL2
			}
			if c.varBind == nil {
				c.varBind = map[*Var]Expr{}
			}
			c.varBind[v] = d
			return Pass
		}
	}
	bd, ok1 := shapeValues(b)
	dd, ok2 := shapeValues(d)
	if ok1 && ok2 {
		return c.dimsMatch(bd, dd)
	}
	return FailL2
}

// shapeValues returns the dimensions of a shape expression: a ShapeExpr's
// values, or those of a shape var with known ShapeInfo.
func shapeValues(e Expr) ([]PrimExpr, bool) {
	switch s := e.(type) {
	case *ShapeExpr:
		return s.Values, true
	case *Var:
		if si, ok := s.StructInfo().(*ShapeInfo); ok && si.Known() {
			return si.Values, true
		}
	}
	return nil, false
}

func shapesProvablyEqual(a, b Expr) bool {
	if a == b {
		return true
	}
	x, ok1 := shapeValues(a)
	y, ok2 := shapeValues(b)
	return ok1 && ok2 && dimsProvablyEqual(x, y)
}

func dimsProvablyEqual(a, b []PrimExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !CanProveEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameFunc approximates TVM's same_as on derivation functions: Go funcs are
// not comparable, so compare code pointers (closures of one literal compare
// equal, which is what a shared derivation means).
func sameFunc(a, b func(*Call) (StructInfo, error)) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}
