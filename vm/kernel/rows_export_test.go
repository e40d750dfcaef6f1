package kernel

import (
	"reflect"

	"github.com/phasec/phasec/ir"
)

// MatchGelu reports whether e is one of GELU's legalized forms and which.
func MatchGelu(e ir.PrimExpr) string {
	x, f := matchGelu(e)
	switch {
	case x == nil:
		return ""
	case fmtPtr(f) == fmtPtr(geluExact):
		return "exact"
	default:
		return "tanh"
	}
}

func fmtPtr(f func(dst, x []float32)) uintptr { return reflect.ValueOf(f).Pointer() }

// NormTaken counts the runs of the layer norm / RMS norm kernel.
func NormTaken() int64 { return normTaken.Load() }
