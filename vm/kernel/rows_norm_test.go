package kernel_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel"
)

// TestNormRows runs layer norm and RMS norm as LegalizeOps writes them
// on odd shapes (extent 1 rows and axes, row lengths around the vector
// width, two leading axes, two normalized axes, without scale or shift)
// on the general path, the vector path, the dispatched path and the
// reference interpreter (checkAll: within 1e-5 of max(1, |want|)), and
// checks the norm kernel (rows_norm.go) runs, or, for a normalized axis
// that is not trailing, does not.
func TestNormRows(t *testing.T) {
	ln := func(axes, flags string) string {
		return "R.nn.layer_norm(x, w, w, axes=" + axes + ", epsilon=1e-5, " + flags + ")"
	}
	both := "center=True, scale=True"
	for _, tc := range []struct {
		name string
		windowCase
		taken bool
	}{
		{"ln_7x37", windowCase{call: ln("[-1]", both), x: []int64{7, 37}, w: []int64{37}}, true},
		{"ln_1x1", windowCase{call: ln("[-1]", both), x: []int64{1, 1}, w: []int64{1}}, true},
		{"ln_5x1", windowCase{call: ln("[-1]", both), x: []int64{5, 1}, w: []int64{1}}, true},
		{"ln_1x768", windowCase{call: ln("[-1]", both), x: []int64{1, 768}, w: []int64{768}}, true},
		{"ln_3x16", windowCase{call: ln("[-1]", both), x: []int64{3, 16}, w: []int64{16}}, true},
		{"ln_3x17", windowCase{call: ln("[-1]", both), x: []int64{3, 17}, w: []int64{17}}, true},
		{"ln_2x3x33", windowCase{call: ln("[-1]", both), x: []int64{2, 3, 33}, w: []int64{33}}, true},
		{"ln_axes2", windowCase{call: ln("[-2, -1]", both), x: []int64{2, 5, 7}, w: []int64{5, 7}}, true},
		{"ln_rows_many", windowCase{call: ln("[-1]", both), x: []int64{300, 250}, w: []int64{250}}, true},
		{"ln_no_center", windowCase{call: ln("[-1]", "center=False, scale=True"), x: []int64{6, 19}, w: []int64{19}}, true},
		{"ln_no_scale", windowCase{call: ln("[-1]", "center=True, scale=False"), x: []int64{6, 19}, w: []int64{19}}, true},
		{"ln_plain", windowCase{call: ln("[-1]", "center=False, scale=False"), x: []int64{6, 19}, w: []int64{19}}, true},
		{"ln_axis0", windowCase{call: ln("[0]", both), x: []int64{6, 5}, w: []int64{6}}, false},
		{"rms_7x37", windowCase{call: "R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)", x: []int64{7, 37}, w: []int64{37}}, true},
		{"rms_1x17", windowCase{call: "R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)", x: []int64{1, 17}, w: []int64{17}}, true},
		{"rms_4x1", windowCase{call: "R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)", x: []int64{4, 1}, w: []int64{1}}, true},
		{"rms_2x3x48", windowCase{call: "R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)", x: []int64{2, 3, 48}, w: []int64{48}}, true},
		{"rms_axes2", windowCase{call: "R.nn.rms_norm(x, w, axes=[-2, -1], epsilon=1e-5)", x: []int64{2, 5, 7}, w: []int64{5, 7}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f := legalizedWindow(t, tc.windowCase)
			before := kernel.NormTaken()
			k := checkAll(t, f, makeArgs(t, f, withVars(f, nil, nil), rand.New(rand.NewPCG(5, 6))))
			if tc.taken {
				require.Greater(t, kernel.NormTaken(), before, "norm kernel taken (pattern %s)", k.Pattern())
				require.Equal(t, "rows", k.Pattern())
			} else {
				require.Equal(t, before, kernel.NormTaken(), "norm kernel not taken (pattern %s)", k.Pattern())
			}
		})
	}
}
