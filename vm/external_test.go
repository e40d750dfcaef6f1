package vm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
)

// buildExternal calls the external symbol ext.double(x) and returns its
// result.
func buildExternal(t testing.TB, m ExternalModule) (*Executable, error) {
	b := NewBuilder()
	b.AddExternal(m)
	b.BeginFunc("main", []string{"x"})
	y := b.NewReg()
	b.CallPacked(y, "ext.double", []Arg{RegArg(0)}, pos(1))
	b.Ret(y, pos(2))
	b.EndFunc()
	return b.Finish()
}

func doubleLinker(m ExternalModule) (map[string]BuiltinFunc, error) {
	if m.Kind != "test.double" {
		return nil, errors.New("unknown kind")
	}
	factor := float32(len(m.Payload))
	return map[string]BuiltinFunc{"ext.double": func(_ *Machine, args []Value) (Value, error) {
		if len(args) != 1 {
			return Value{}, errors.New("want one argument")
		}
		x, ok := args[0].Tensor()
		if !ok || x.DType != tensor.Float32 {
			return Value{}, errors.New("want a tensor")
		}
		y := x.Clone()
		d := tensor.Data[float32](y)
		for i := range d {
			d[i] *= factor
		}
		return TensorValue(y), nil
	}}, nil
}

func TestExternalModuleRoundTripAndLink(t *testing.T) {
	exe, err := buildExternal(t, ExternalModule{Kind: "test.double", Symbols: []string{"ext.double"}, Payload: []byte("xx")})
	require.NoError(t, err)
	back, err := Unmarshal(exe.Marshal())
	require.NoError(t, err)
	require.Len(t, back.External, 1)
	assert.Equal(t, exe.External[0], back.External[0])

	_, err = New(back, Options{})
	assert.ErrorContains(t, err, "no linker is configured")

	v, err := New(back, Options{LinkExternal: doubleLinker})
	require.NoError(t, err)
	x := tensor.New(tensor.Float32, 3)
	copy(tensor.Data[float32](x), []float32{1, 2, 3})
	out, err := v.Run(t.Context(), "main", TensorValue(x))
	require.NoError(t, err)
	got, _ := out.Tensor()
	assert.Equal(t, []float32{2, 4, 6}, tensor.Data[float32](got), "factor = payload length 2")

	_, err = New(back, Options{LinkExternal: func(ExternalModule) (map[string]BuiltinFunc, error) { return nil, nil }})
	assert.ErrorContains(t, err, `does not define its symbol "ext.double"`)
}

func TestExternalModuleValidation(t *testing.T) {
	_, err := buildExternal(t, ExternalModule{Kind: "test.double", Symbols: []string{"ext.other"}})
	assert.ErrorContains(t, err, `function "ext.double": no builtin of that name is registered and no external module exports it`)
	_, err = buildExternal(t, ExternalModule{Kind: "", Symbols: []string{"ext.double"}})
	assert.ErrorContains(t, err, "external module 0 has no kind")
	_, err = buildExternal(t, ExternalModule{Kind: "k", Symbols: []string{"ext.double", "vm.builtin.copy"}})
	assert.ErrorContains(t, err, `external symbol "vm.builtin.copy" of module 0 (k) shadows a builtin`)
	_, err = buildExternal(t, ExternalModule{Kind: "k", Symbols: []string{"ext.double", "ext.double"}})
	assert.ErrorContains(t, err, `external symbol "ext.double" is exported twice`)
}

func TestOldFormatVersionIsRejected(t *testing.T) {
	data := buildAddOne(t).Marshal()
	data[8], data[9] = 2, 0
	_, err := Unmarshal(data)
	assert.ErrorContains(t, err, "format version 2, this build reads version 3: rebuild the executable with this phasec")
}
