package passes

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// Normalize is TVM's relax.transform.Normalize (opt level 1 there too).
var Normalize = Define(Info{
	Name:        "Normalize",
	Doc:         "put every Relax function in A-normal form with struct info filled in",
	OptLevel:    1,
	Establishes: phase.Of(phase.Normalized),
	// Normalization only binds nested expressions to vars and fills in
	// struct info: it adds no op, block, function, shape value or
	// attribute, so it keeps every later phase's properties (the contract
	// audit checks this on the lowered corpus), and a lowered module can
	// be re-normalized without losing its phase.
	Preserves: phase.Upto(phase.Build).Minus(phase.Upto(phase.Ingest)),
}, Module(func(_ *Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := ir.NormalizeModule(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))
