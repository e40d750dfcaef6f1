package op

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayoutHelpers checks the layout algebra against hand-worked cases:
// a rank-4 tensor converted from NCHW to NHWC is in layout "ACDB".
func TestLayoutHelpers(t *testing.T) {
	assert.Equal(t, "ABCD", InitialLayout(4))
	assert.Equal(t, "", InitialLayout(0))
	assert.Equal(t, LayoutUnknown, InitialLayout(-1))
	// The decision for conv2d's data: NCHW written, NHWC wanted.
	assert.Equal(t, "ACDB", TransposeLike("ABCD", "NCHW", "NHWC"))
	// The attribute for a data layout NCHW whose tensor is now in ACDB.
	assert.Equal(t, "NHWC", TransposeLike("NCHW", "ABCD", "ACDB"))
	assert.Equal(t, "IHWO", TransposeLike("OIHW", "ABCD", "BCDA"))
	// Axis 1 (C) of the written tensor is axis 3 in ACDB; -1 (W) is 2.
	assert.Equal(t, 3, FindAxis("ACDB", 1))
	assert.Equal(t, 2, FindAxis("ACDB", -1))
	assert.Equal(t, 0, FindAxis("ACDB", 0))
	// A rank-5 tensor broadcast against an ACDB one: the extra leading axis
	// stays, the others follow (shifted by one letter).
	assert.Equal(t, "ABDEC", FollowDecision("ACDB", 5))
	assert.Equal(t, "ACDB", FollowDecision("ACDB", 4))
	// expand_dims(axis=1) of an ACDB tensor: the written result is ABCDE
	// with B new; the converted one holds A, B(new), D, E, C.
	assert.Equal(t, "ABDEC", expandedLayout("ACDB", []int{1}))
	assert.Equal(t, "ABC", expandedLayout("AB", []int{2}))
	assert.True(t, IsInitial("ABC"))
	assert.False(t, IsInitial("ACB"))
}

func TestNLayout(t *testing.T) {
	a := TupleLayout(LeafLayout("ACDB"), LeafLayout("A"))
	b := TupleLayout(LeafLayout("ACDB"), LeafLayout("A"))
	assert.True(t, a.Equal(b))
	assert.False(t, a.Equal(TupleLayout(LeafLayout("ACDB"))))
	assert.False(t, a.Equal(LeafLayout("ACDB")))
	assert.False(t, a.HasUnknown())
	assert.True(t, TupleLayout(LeafLayout(LayoutUnknown)).HasUnknown())
	assert.Equal(t, "(ACDB, A)", a.String())
}

func TestCheckDesiredLayouts(t *testing.T) {
	for _, ok := range [][]string{{"NHWC", "OHWI"}, {"NCHW", "OIHW"}, {"NHWC", "HWIO", "NCHW"}} {
		assert.NoError(t, CheckDesiredLayouts("relax.nn.conv2d", ok), "%v", ok)
	}
	assert.NoError(t, CheckDesiredLayouts("relax.nn.conv1d", []string{"NWC", "OWI"}))
	// Split layouts, as TVM's ConvertLayout tests ask for them.
	for _, ok := range [][]string{{"NCHW4c", "OIHW4o"}, {"NHWC4c", "OHWI4o"}, {"N2nHWC4c", "OHWI2i4o"}, {"NCHW16c", "OIHW16i16o", "NCHW16c"}} {
		assert.NoError(t, CheckDesiredLayouts("relax.nn.conv2d", ok), "%v", ok)
	}
	assert.NoError(t, CheckDesiredLayouts("relax.nn.conv2d_transpose", []string{"NHWC", "IHWO"}))
	assert.NoError(t, CheckDesiredLayouts("relax.image.resize2d", []string{"NHWC"}))
	bad := map[string]struct {
		op      string
		layouts []string
		unknown bool
		msg     string
	}{
		"unknown axis":   {"relax.nn.conv2d", []string{"NHWQ", "OHWI"}, true, `unknown layout "NHWQ" for relax.nn.conv2d's data: 'Q' is not one of its axes N, C, H, W`},
		"not a layout":   {"relax.nn.conv2d", []string{"NH-C", "OHWI"}, true, `unknown layout "NH-C"`},
		"split twice":    {"relax.nn.conv2d", []string{"NCHW4c4c", "OIHW4o"}, false, `relax.nn.conv2d cannot take layout "NCHW4c4c" for its data: the axis C is split twice (it accepts data a permutation of NCHW (axes may be split: NCHW4c)`},
		"split no block": {"relax.nn.conv2d", []string{"NCHW", "OIHW4"}, false, `relax.nn.conv2d cannot take layout "OIHW4" for its kernel: the block size 4 at offset 4 ends the layout`},
		"split lacks":    {"relax.nn.conv2d", []string{"NHW4c", "OIHW"}, false, `the subordinate axis 4c has no primal axis C`},
		"split pool":     {"relax.image.resize2d", []string{"NCHW4c"}, false, `cannot take layout "NCHW4c"`},
		"wrong rank":     {"relax.nn.conv2d", []string{"NWC", "OIHW"}, false, `cannot take layout "NWC"`},
		"repeated axis":  {"relax.nn.conv2d", []string{"NHWC", "OOHW"}, false, `cannot take layout "OOHW" for its kernel`},
		"too few":        {"relax.nn.conv2d", []string{"NHWC"}, false, `takes 2 to 3 layouts`},
		"no desired":     {"relax.nn.relu", []string{"NHWC"}, false, `relax.nn.relu takes no desired layout`},
		"not an op":      {"relax.nn.conv4d", []string{"NHWC"}, false, `relax.nn.conv4d is not an op`},
		"resize layouts": {"relax.image.resize2d", []string{"HWCN"}, false, `it accepts data NCHW or NHWC`},
	}
	for name, c := range bad {
		err := CheckDesiredLayouts(c.op, c.layouts)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.msg, name)
		var de *DesiredLayoutError
		require.ErrorAs(t, err, &de, name)
		assert.Equal(t, c.unknown, de.Unknown, name)
		assert.Equal(t, c.op, de.Op, name)
	}
}
