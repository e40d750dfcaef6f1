package lower

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/phasec/phasec/ir"
)

// provesSamePosition on hand-built index expressions: each claimed proof
// is also checked element by element for several values of the shape
// variables, and each near miss must not be proven.
func TestProvesSamePosition(t *testing.T) {
	n, m := ir.NewPrimVar("n", ir.Int64), ir.NewPrimVar("m", ir.Int64)
	v0, v1, v2 := ir.NewPrimVar("v0", ir.Int64), ir.NewPrimVar("v1", ir.Int64), ir.NewPrimVar("v2", ir.Int64)
	c := ir.I64
	fd, fm, add, mul := ir.FloorDiv, ir.FloorMod, ir.Add, ir.Mul
	dims := func(ds ...ir.PrimExpr) []ir.PrimExpr { return ds }
	vars := func(vs ...*ir.PrimVar) []*ir.PrimVar { return vs }
	// flat is 12·v0 + 6·v1 + v2 over (n, 2, 6)
	flat := add(add(mul(v0, c(12)), mul(v1, c(6))), v2)
	cases := []struct {
		name    string
		vars    []*ir.PrimVar
		out, in []ir.PrimExpr
		idx     []ir.PrimExpr
		want    bool
	}{
		{"flatten", vars(v0), dims(mul(n, c(3))), dims(n, c(3)), dims(fd(v0, c(3)), fm(v0, c(3))), true},
		{"flatten with mod", vars(v0), dims(mul(n, c(3))), dims(n, c(3)), dims(fm(fd(v0, c(3)), n), fm(v0, c(3))), true},
		{"unflatten", vars(v0, v1), dims(n, m), dims(mul(n, m)), dims(fm(add(mul(v0, m), v1), mul(n, m))), true},
		{"symbolic inner", vars(v0), dims(mul(m, n)), dims(n, m), dims(fm(fd(v0, m), n), fm(v0, m)), true},
		{"expand", vars(v0, v1, v2), dims(n, c(1), m), dims(n, m), dims(v0, v2), true},
		{"regroup", vars(v0, v1, v2), dims(n, c(2), c(6)), dims(n, c(3), c(4)), dims(fm(fd(flat, c(12)), n), fm(fd(flat, c(4)), c(3)), fm(flat, c(4))), true},
		{"regroup as simplified", vars(v0, v1, v2), dims(n, c(2), c(6)), dims(n, c(3), c(4)), dims(
			fm(add(v0, fd(add(mul(v1, c(6)), v2), c(12))), n),
			fm(add(v1, fd(add(mul(v1, c(2)), v2), c(4))), c(3)),
			fm(add(mul(v1, c(2)), v2), c(4))), true},
		{"column major", vars(v0), dims(mul(n, c(3))), dims(n, c(3)), dims(fm(v0, n), fd(v0, n)), false},
		{"wrong radix", vars(v0), dims(mul(n, c(3))), dims(c(3), n), dims(fd(v0, c(3)), fm(v0, c(3))), false},
		{"rotation", vars(v0), dims(mul(n, c(3))), dims(n, c(3)), dims(fm(fd(add(v0, c(1)), c(3)), n), fm(add(v0, c(1)), c(3))), false},
		{"transpose", vars(v0, v1), dims(m, n), dims(n, m), dims(v1, v0), false},
		// the coefficients line up as digits, the positions do not
		{"swap outer axes", vars(v0, v1, v2), dims(c(2), c(3), n), dims(c(3), c(2), n), dims(v1, v0, v2), false},
		{"bad realignment", vars(v0, v1, v2), dims(n, c(2), c(6)), dims(n, c(3), c(4)), dims(
			fm(add(v0, fd(add(mul(v1, c(6)), v2), c(12))), n),
			fm(add(v1, fd(add(mul(v1, c(2)), v2), c(4))), c(3)),
			fm(add(mul(v1, c(3)), v2), c(4))), false},
		{"dropped term", vars(v0, v1, v2), dims(n, c(2), c(6)), dims(n, c(3), c(4)), dims(
			fm(v0, n), fm(fd(add(mul(v1, c(2)), v2), c(4)), c(3)), fm(add(mul(v1, c(2)), v2), c(4))), false},
	}
	for _, tc := range cases {
		got := provesSamePosition(tc.vars, tc.out, tc.idx, tc.in)
		assert.Equal(t, tc.want, got, "%s: proven", tc.name)
		// An independent check for n, m in 1..4: true claims must hold at
		// every element (false ones are near misses by construction).
		for nv := int64(1); nv <= 4 && got; nv++ {
			for mv := int64(1); mv <= 4; mv++ {
				sub := map[*ir.PrimVar]ir.PrimExpr{n: c(nv), m: c(mv)}
				out, in, idx := make([]ir.PrimExpr, len(tc.out)), make([]ir.PrimExpr, len(tc.in)), make([]ir.PrimExpr, len(tc.idx))
				for i, d := range tc.out {
					out[i] = ir.Simplify(ir.SubstitutePrim(d, sub))
				}
				for i, d := range tc.in {
					in[i] = ir.Simplify(ir.SubstitutePrim(d, sub))
				}
				for i, d := range tc.idx {
					idx[i] = ir.SubstitutePrim(d, sub)
				}
				assert.True(t, exhaustiveSamePosition(tc.vars, out, idx, in), "%s: proven but wrong at n=%d m=%d", tc.name, nv, mv)
			}
		}
	}
}
