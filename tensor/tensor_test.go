package tensor

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewIsZeroedAndAligned(t *testing.T) {
	for _, shape := range [][]int64{{}, {0}, {1}, {3, 5}, {2, 0, 4}, {7, 3, 2}} {
		for _, d := range DTypes {
			x := New(d, shape...)
			want := int64(1)
			for _, s := range shape {
				want *= s
			}
			require.Equal(t, want, x.NumElements())
			require.Len(t, x.Bytes(), int(want)*d.Size())
			for _, b := range x.Bytes() {
				require.Zero(t, b)
			}
			if len(x.Storage.Bytes()) > 0 {
				assert.Zero(t, uintptr(unsafe.Pointer(&x.Storage.Bytes()[0]))%Alignment)
			}
		}
	}
}

func TestNewCheckedRejectsBadShapes(t *testing.T) {
	_, err := NewChecked(Float32, []int64{2, -1})
	assert.ErrorContains(t, err, "negative dimension in shape (2, -1)")
	_, err = NewChecked(Float32, []int64{1 << 31, 1 << 31})
	assert.ErrorContains(t, err, "elements")
	_, err = NewChecked(Invalid, []int64{2})
	assert.ErrorContains(t, err, "invalid dtype")
	// A zero dimension makes a huge product empty rather than an overflow.
	x, err := NewChecked(Int8, []int64{1 << 40, 1 << 40, 0})
	require.NoError(t, err)
	assert.Zero(t, x.NumElements())
	assert.Panics(t, func() { New(Float32, -1) })
}

func TestViewSharesStorage(t *testing.T) {
	s := NewStorage(64)
	a, err := View(s, 0, Float32, []int64{4})
	require.NoError(t, err)
	b, err := View(s, 8, Float32, []int64{2, 2})
	require.NoError(t, err)
	Data[float32](a)[2] = 7
	assert.Equal(t, float32(7), Data[float32](b)[0], "b starts 8 bytes (2 floats) into the storage")
	Data[float32](b)[3] = 9 // byte 8+12 = 20 = float index 5 of the storage
	all, err := View(s, 0, Float32, []int64{16})
	require.NoError(t, err)
	assert.Equal(t, float32(9), Data[float32](all)[5])

	_, err = View(s, 4, Float64, []int64{1})
	assert.ErrorContains(t, err, "offset 4 is not a non-negative multiple of the float64 element size 8")
	_, err = View(s, 56, Float32, []int64{3})
	assert.ErrorContains(t, err, "float32(3,) needs 12 bytes at offset 56 but the storage has 64")
	_, err = View(s, 128, Int8, []int64{0})
	assert.ErrorContains(t, err, "at offset 128")
	_, err = View(s, -8, Int8, []int64{1})
	assert.Error(t, err)
	_, err = View(nil, 0, Int8, nil)
	assert.Error(t, err)
	v, err := View(s, 64, Int8, []int64{0})
	require.NoError(t, err, "an empty view at the end is fine")
	assert.Empty(t, Data[int8](v))
}

func TestDataTypes(t *testing.T) {
	x := New(Float16, 3)
	Data[F16](x)[1] = F16FromFloat32(1.5)
	assert.Equal(t, 1.5, x.Float64At(1))
	assert.Equal(t, uint16(0x3e00), Data[uint16](x)[1])
	assert.Panics(t, func() { Data[float32](x) })
	assert.Panics(t, func() { Data[BF16](x) })
	y := New(BFloat16, 2)
	Data[BF16](y)[0] = BF16FromFloat32(-3)
	assert.Equal(t, -3.0, y.Float64At(0))
	assert.Panics(t, func() { Data[int32](New(Uint32, 1)) })
	assert.Panics(t, func() { Data[uint8](New(Bool, 1)) })
	assert.Len(t, Data[bool](New(Bool, 5)), 5)
}

// SetFloat64 then Float64At gives back what the dtype can represent,
// computed independently here per dtype.
func TestFloat64AtSetFloat64(t *testing.T) {
	inputs := []float64{0, 1, -1, 2.75, -2.75, 127, 128, -129, 255, 256, 65535, 65536, 1e10, -1e10, 0.1, math.Inf(1), math.NaN()}
	want := func(d DType, v float64) float64 {
		clamp := func(lo, hi float64) float64 {
			if v != v {
				return 0
			}
			return math.Max(lo, math.Min(hi, math.Trunc(v)))
		}
		switch d {
		case Bool:
			if v != 0 {
				return 1
			}
			return 0
		case Int8:
			return clamp(-128, 127)
		case Int16:
			return clamp(-32768, 32767)
		case Int32:
			return clamp(-1<<31, 1<<31-1)
		case Int64:
			return clamp(-1<<63, 1<<63)
		case Uint8:
			return clamp(0, 255)
		case Uint16:
			return clamp(0, 65535)
		case Uint32:
			return clamp(0, 1<<32-1)
		case Uint64:
			return clamp(0, 1<<64)
		case Float16:
			return float64(F16FromFloat64(v).Float32())
		case BFloat16:
			return float64(BF16FromFloat64(v).Float32())
		case Float32:
			return float64(float32(v))
		}
		return v
	}
	for _, d := range DTypes {
		x := New(d, int64(len(inputs)))
		for i, v := range inputs {
			x.SetFloat64(i, v)
		}
		for i, v := range inputs {
			w := want(d, v)
			got := x.Float64At(i)
			if math.IsNaN(w) {
				assert.True(t, math.IsNaN(got), "%s %v", d, v)
				continue
			}
			assert.Equalf(t, w, got, "%s set %v", d, v)
		}
	}
	// Exact large integers survive in int64/uint64.
	x := New(Int64, 1)
	x.SetFloat64(0, -1<<62)
	assert.Equal(t, int64(-1<<62), Data[int64](x)[0])
}

func TestFormatShape(t *testing.T) {
	assert.Equal(t, "()", FormatShape(nil))
	assert.Equal(t, "(5,)", FormatShape([]int64{5}))
	assert.Equal(t, "(2, 3)", FormatShape([]int64{2, 3}))
	assert.Equal(t, "float32(2, 3)", New(Float32, 2, 3).String())
}

func TestCloneAndFromSlice(t *testing.T) {
	x, err := FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, Float32, x.DType)
	assert.Equal(t, []int64{2, 3}, x.Shape)
	c := x.Clone()
	Data[float32](c)[0] = 9
	assert.Equal(t, float32(1), Data[float32](x)[0], "clone has its own storage")
	assert.Equal(t, []float32{9, 2, 3, 4, 5, 6}, Data[float32](c))

	for _, c := range []struct {
		got  func() (*Tensor, error)
		want DType
	}{
		{func() (*Tensor, error) { return FromSlice([]bool{true}) }, Bool},
		{func() (*Tensor, error) { return FromSlice([]int8{1}) }, Int8},
		{func() (*Tensor, error) { return FromSlice([]uint16{1}) }, Uint16},
		{func() (*Tensor, error) { return FromSlice([]F16{0x3c00}) }, Float16},
		{func() (*Tensor, error) { return FromSlice([]BF16{0x3f80}) }, BFloat16},
		{func() (*Tensor, error) { return FromSlice([]uint64{1}) }, Uint64},
		{func() (*Tensor, error) { return FromSlice([]float64{1}) }, Float64},
	} {
		y, err := c.got()
		require.NoError(t, err)
		assert.Equal(t, c.want, y.DType)
		assert.Equal(t, 1.0, y.Float64At(0))
	}
	_, err = FromSlice([]int32{1, 2, 3}, 2, 2)
	assert.EqualError(t, err, "tensor.FromSlice: shape (2, 2) needs 4 elements, got 3")
	type myFloat float32
	_, err = FromSlice([]myFloat{1})
	assert.ErrorContains(t, err, "not a tensor element type")
	s, err := FromSlice([]int64{7}, []int64{}...)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, s.Shape)
}

func TestStatsString(t *testing.T) {
	assert.Equal(t, "live 512 B, peak 1.5 KiB, 12 allocs (3 reused), 11 frees, cached 2.0 MiB",
		Stats{Live: 512, Peak: 1536, Allocs: 12, Reuses: 3, Frees: 11, Cached: 2 << 20}.String())
	assert.Equal(t, "3.0 GiB", FormatBytes(3<<30))
	assert.Equal(t, "0 B", FormatBytes(0))
}

func TestViewIntoReusesTheTensor(t *testing.T) {
	s := NewStorage(64)
	var x Tensor
	require.NoError(t, ViewInto(&x, s, 8, Float32, []int64{2, 3}))
	assert.Equal(t, Tensor{DType: Float32, Shape: []int64{2, 3}, Storage: s, Offset: 8}, x)
	Data[float32](&x)[0] = 5
	all, err := View(s, 0, Float32, []int64{16})
	require.NoError(t, err)
	assert.Equal(t, float32(5), Data[float32](all)[2])

	allocs := testing.AllocsPerRun(100, func() {
		require.NoError(t, ViewInto(&x, s, 0, Int32, []int64{4, 4}))
	})
	assert.Zero(t, allocs)
	assert.Equal(t, []int64{4, 4}, x.Shape)
	err = ViewInto(&x, s, 4, Float64, []int64{1})
	assert.ErrorContains(t, err, "offset 4 is not a non-negative multiple")
	assert.Equal(t, Int32, x.DType, "unchanged on error")
}

// TestFreezeAndMemo: a frozen storage keeps what Memo derives from it, one
// build per key; storage that is not frozen (or an allocator's, which
// cannot be frozen) builds nothing.
func TestFreezeAndMemo(t *testing.T) {
	s := NewStorage(16)
	builds := 0
	build := func() any { builds++; return builds }
	v, ok := s.Memo("k", build)
	require.False(t, ok)
	require.Nil(t, v)
	require.Zero(t, builds)

	require.True(t, s.Freeze())
	require.True(t, s.Frozen())
	for range 3 {
		v, ok = s.Memo("k", build)
		require.True(t, ok)
		require.Equal(t, 1, v)
	}
	v, _ = s.Memo("other", build)
	require.Equal(t, 2, v, "a second key builds its own value")

	a := NewPooledAllocator()
	owned, err := a.Alloc(16)
	require.NoError(t, err)
	require.False(t, owned.Freeze(), "pooled storage is reused after Free: it cannot be frozen")
	require.False(t, owned.Frozen())
}
