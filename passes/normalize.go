package passes

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// NormalizeInfo declares Normalize: TVM's relax.transform.Normalize (opt
// level 1 there too).
var NormalizeInfo = Info{
	Name:        "Normalize",
	Doc:         "put every Relax function in A-normal form with struct info filled in",
	OptLevel:    1,
	Establishes: phase.Of(phase.Normalized),
}

func init() {
	RegisterModulePass(NormalizeInfo, func(env *Env, mod *ir.Module) (*ir.Module, error) {
		out, errs := ir.NormalizeModule(mod)
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return out, nil
	})
}
