package tensor_test

// An external test package: tensor imports nothing of phasec, not even in
// its own tests (internal/deps checks internal test files too).

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
)

// Every scalar dtype the IR parses must either map to the runtime type of
// the same size and kind or be rejected with a reason; the IR's own
// description of the type is the independent reference.
func TestParseDTypeAgreesWithIR(t *testing.T) {
	var names []string
	for _, base := range []string{"int", "uint", "float", "bfloat"} {
		for _, bits := range []string{"1", "8", "16", "32", "64"} {
			names = append(names, base+bits)
		}
	}
	names = append(names, "bool", "handle", "void", "")
	for _, base := range []string{"bool", "int8", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"} {
		for _, lanes := range []string{"x2", "x4", "x8", "x16", "x1", "x0", "x-4", "x"} {
			names = append(names, base+lanes)
		}
	}
	for _, s := range names {
		irT, irErr := ir.ParseDataType(s)
		d, err := tensor.ParseDType(s)
		if irErr != nil {
			assert.Error(t, err, "%q: the IR rejects it, so must the runtime", s)
			continue
		}
		switch {
		case irT.IsVoid() || irT.IsHandle() || (irT.IsInt() && irT.Bits == 1):
			require.Error(t, err, s)
			assert.Contains(t, err.Error(), "dtype")
		case !irT.IsScalar():
			require.Error(t, err, s)
			assert.Contains(t, err.Error(), "vector types", s)
		default:
			require.NoError(t, err, s)
			assert.Equal(t, irT.Bytes(), d.Size(), s)
			assert.Equal(t, irT.IsFloat(), d.IsFloat(), s)
			assert.Equal(t, irT.IsInt(), d.IsSigned(), s)
			assert.Equal(t, irT.IsUInt() && irT.Bits > 1, d.IsUnsigned(), s)
		}
	}
}
