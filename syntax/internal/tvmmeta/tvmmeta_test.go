package tvmmeta

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// TestTensorRoundTrip: DecodeTensor reads back what EncodeTensor writes,
// for every dtype family the metadata section carries.
func TestTensorRoundTrip(t *testing.T) {
	for _, dt := range []ir.DataType{ir.Float32, ir.Float64, ir.Int64, ir.Int32, ir.Bool,
		{Code: ir.CodeUInt, Bits: 8, Lanes: 1}, {Code: ir.CodeBFloat, Bits: 16, Lanes: 1}} {
		for _, shape := range [][]int64{{}, {3}, {2, 3}} {
			a, err := ir.NewNDArray(dt, shape)
			require.NoError(t, err)
			for i := range a.Data {
				a.Data[i] = byte(i*7 + 1)
			}
			if dt == ir.Bool {
				for i := range a.Data {
					a.Data[i] &= 1
				}
			}
			got, err := DecodeTensor(EncodeTensor(a))
			require.NoError(t, err, "%s %v", dt, shape)
			assert.Equal(t, a.DType, got.DType, "%s %v", dt, shape)
			assert.Equal(t, a.Shape, got.Shape, "%s %v", dt, shape)
			assert.Equal(t, a.Data, got.Data, "%s %v", dt, shape)
		}
	}
}

func TestDecodeRejectsOtherBlobs(t *testing.T) {
	_, err := DecodeTensor([]byte("not a tensor, but long enough to hold a header"))
	assert.ErrorContains(t, err, "bad magic")
	a, err := ir.NewNDArray(ir.Float32, []int64{4})
	require.NoError(t, err)
	blob := EncodeTensor(a)
	_, err = DecodeTensor(blob[:len(blob)-1])
	assert.Error(t, err, "a truncated tensor")
}
