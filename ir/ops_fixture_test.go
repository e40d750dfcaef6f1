package ir

// Stand-ins for the few Relax ops ir's own tests build calls with. The real
// op library (package op) imports ir, so ir's internal tests cannot import
// it; but ir's external benchmarks link it, and its ops register at init,
// after these tests' package-level vars would. testOp therefore registers a
// stand-in lazily, only when the real op is absent. The stand-ins carry only
// what equality, hashing and printing read: the name and the schema.
var fixtureOps = map[string]*Op{
	"relax.add":      {Name: "relax.add", Pure: true, Params: []Param{{Name: "x1"}, {Name: "x2"}}},
	"relax.multiply": {Name: "relax.multiply", Pure: true, Params: []Param{{Name: "x1"}, {Name: "x2"}}},
	"relax.reshape":  {Name: "relax.reshape", Pure: true, Params: []Param{{Name: "x"}, {Name: "shape", Kind: ArgShape}}},
	"relax.sum": {Name: "relax.sum", Pure: true, Params: []Param{
		{Name: "x"}, {Name: "axis", Kind: AttrInts, Optional: true}, {Name: "keepdims", Kind: AttrBool, Default: false}}},
	"relax.call_tir": {Name: "relax.call_tir", Pure: true, SInfoArgs: OutSInfo, Category: CatCall, Params: []Param{
		{Name: "gvar"}, {Name: "args", Kind: ArgTuple}, {Name: "tir_vars", Kind: ArgShape, Optional: true}}},
}

// testOp returns the registered op called name, registering its stand-in
// when the op library is not linked.
func testOp(name string) *Op {
	if op, ok := LookupOp(name); ok {
		return op
	}
	return RegisterOp(fixtureOps[name])
}
