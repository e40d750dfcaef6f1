package lower_test

import (
	"fmt"
	"testing"
)

// Oracle tests of scatter_nd, dynamic_strided_slice, layout_transform and
// memory.view: each case is evaluated with the op's own semantics and
// through its legalized PrimFuncs (runFullyLegalized).

func TestLegalizeScatterNDOracle(t *testing.T) {
	var cases []legalCase
	for _, dt := range []string{"float32", "int32", "int64"} {
		for _, red := range []string{"update", "add", "mul", "max", "min"} {
			p := func(x, u string) []string { return []string{tensorParam("x", x, dt), tensorParam("u", u, dt)} }
			cases = append(cases,
				legalCase{name: "rows duplicate " + red + dt, params: p("(4, 3)", "(3, 3)"), body: fmt.Sprintf(`
					i = R.const([[1], [3], [1]], "int64")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
				legalCase{name: "elements symbolic " + red + dt, params: p(`("n", 3)`, "(3,)"), body: fmt.Sprintf(`
					i = R.const([[0, 2], [-1, 0], [0, 2]], "int32")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
				legalCase{name: "batched " + red + dt, params: p("(2, 3, 4)", "(2, 1, 4)"), body: fmt.Sprintf(`
					i = R.const([[[0, 1]], [[1, 2]]], "int64")
					gv = R.scatter_nd(x, i, u, reduction=%q)`, red)},
			)
		}
		cases = append(cases,
			legalCase{name: "rank-1 indices " + dt, params: []string{tensorParam("x", "(3, 2)", dt), tensorParam("u", "(2,)", dt)}, body: `
				i = R.const([2], "int64")
				gv = R.scatter_nd(x, i, u)`},
			legalCase{name: "extent 1 " + dt, params: []string{tensorParam("x", "(1, 1)", dt), tensorParam("u", "(1,)", dt)}, body: `
				i = R.const([[0, 0]], "int64")
				gv = R.scatter_nd(x, i, u, reduction="add")`},
			legalCase{name: "no updates " + dt, params: []string{tensorParam("x", `("n", 3)`, dt), tensorParam("i", "(0, 1)", "int64"), tensorParam("u", "(0, 3)", dt)},
				body: `gv = R.scatter_nd(x, i, u, reduction="mul")`},
			legalCase{name: "empty data " + dt, params: []string{tensorParam("x", "(2, 0)", dt), tensorParam("u", "(1, 0)", dt)}, body: `
				i = R.const([[1]], "int64")
				gv = R.scatter_nd(x, i, u)`},
		)
	}
	runFullyLegalized(t, cases)
}
