package ir

import "slices"

// Attrs is a dictionary of attributes on a module, a function or a call.
// Values are one of: nil, bool, int64, float64, string, DataType, PrimExpr,
// Verbatim, []any (of these) or Attrs. Attrs are compared as dictionaries
// and always iterated in sorted key order (Keys), so output is
// deterministic.
//
// Treat Attrs as immutable once attached to a node: use With to derive a
// changed copy.
type Attrs map[string]any

// Verbatim is an attribute value the parser keeps as the source text of a
// Python expression it has no IR for (an index-map lambda of an opaque
// call); the printer writes it back as is.
type Verbatim string

// Keys returns the keys in sorted order.
func (a Attrs) Keys() []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// With returns a copy of a with key set to value.
func (a Attrs) With(key string, value any) Attrs {
	b := make(Attrs, len(a)+1)
	for k, v := range a {
		b[k] = v
	}
	b[key] = value
	return b
}

// Without returns a copy of a without key (a itself when key is absent).
func (a Attrs) Without(key string) Attrs {
	if _, ok := a[key]; !ok {
		return a
	}
	b := make(Attrs, len(a))
	for k, v := range a {
		if k != key {
			b[k] = v
		}
	}
	return b
}

// String returns the string attribute key, if present.
func (a Attrs) String(key string) (string, bool) {
	s, ok := a[key].(string)
	return s, ok
}

// Bool returns the bool attribute key, if present.
func (a Attrs) Bool(key string) (bool, bool) {
	b, ok := a[key].(bool)
	return b, ok
}

// Int returns the integer attribute key, if present.
func (a Attrs) Int(key string) (int64, bool) {
	i, ok := a[key].(int64)
	return i, ok
}

// Ints returns the integer-list attribute key (as op schemas store
// AttrInts parameters), if present.
func (a Attrs) Ints(key string) ([]int64, bool) { return AttrAsInts(a[key]) }

// Well-known attribute keys.
const (
	AttrGlobalSymbol     = "global_symbol"       // public name of a function
	AttrForcePure        = "relax.force_pure"    // body not checked for purity
	AttrNumInput         = "num_input"           // leading params that are inputs; rest are weights
	AttrTIRVarUpperBound = "tir_var_upper_bound" // symbolic var -> upper bound, for memory planning
	AttrSkipOptimize     = "relax.skip_optimize" // function passes skip this function (bool)
	AttrPrimitive        = "Primitive"           // a fused group
	AttrNoAlias          = "tir.noalias"         // TIR: buffers do not alias
	AttrPhase            = "phase"               // module phase (see package phase)
	AttrExternalMods     = "external_mods"       // module: external codegens' modules (RunCodegen)
)

// Target is a compilation target as TVMScript writes it in a function
// attribute, T.target({...}): the configuration TVM's Target.Export()
// returns ("kind", "keys", "tag", "host", options). phasec keeps it as
// data for round trips; nothing reads it yet. Config is never nil.
type Target struct{ Config Attrs }
