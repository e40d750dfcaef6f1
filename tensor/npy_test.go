package tensor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// golden lists the files testdata/gen_golden.py writes from the format spec
// (regenerate them with it, not with this package's writer), with their values
// restated here independently (C order). gen_golden.py --check verified
// each little-endian C-order file is byte-identical to NumPy's np.save.
var golden = []struct {
	file   string
	dt     DType
	shape  []int64
	values []float64
	// exact integer values where float64 cannot hold them
	i64 []int64
	u64 []uint64
	// writable: a little-endian C-order 1.0 file that WriteNpy must reproduce
	writable bool
}{
	{file: "bool", dt: Bool, shape: []int64{2, 3}, values: []float64{1, 0, 1, 1, 0, 0}, writable: true},
	{file: "int8", dt: Int8, shape: []int64{4}, values: []float64{-128, -1, 0, 127}, writable: true},
	{file: "int16", dt: Int16, shape: []int64{2, 2}, values: []float64{-32768, -2, 3, 32767}, writable: true},
	{file: "int32", dt: Int32, shape: []int64{3}, values: []float64{-2147483648, 7, 2147483647}, writable: true},
	{file: "int64", dt: Int64, shape: []int64{2}, i64: []int64{math.MinInt64, math.MaxInt64}, writable: true},
	{file: "uint8", dt: Uint8, shape: []int64{3}, values: []float64{0, 128, 255}, writable: true},
	{file: "uint16", dt: Uint16, shape: []int64{2}, values: []float64{1, 65535}, writable: true},
	{file: "uint32", dt: Uint32, shape: []int64{2}, values: []float64{1, 4294967295}, writable: true},
	{file: "uint64", dt: Uint64, shape: []int64{2}, u64: []uint64{1, math.MaxUint64}, writable: true},
	{file: "float16", dt: Float16, shape: []int64{5}, values: []float64{1, -2, 65504, math.Ldexp(1, -24), 0.333251953125}, writable: true},
	{file: "bfloat16", dt: BFloat16, shape: []int64{3}, values: []float64{1, -2, 3.140625}, writable: true},
	{file: "float32", dt: Float32, shape: []int64{2, 3}, values: []float64{1, 2, 3, -4.5, 0.25, math.Inf(1)}, writable: true},
	{file: "float64", dt: Float64, shape: []int64{2, 2}, values: []float64{0.1, -1e300, 5e-324, math.Copysign(0, -1)}, writable: true},
	{file: "scalar_float32", dt: Float32, shape: []int64{}, values: []float64{7.5}, writable: true},
	{file: "empty_float32", dt: Float32, shape: []int64{0}, values: []float64{}, writable: true},
	{file: "empty_2x0_int64", dt: Int64, shape: []int64{2, 0}, values: []float64{}, writable: true},
	{file: "big_dims_uint8", dt: Uint8, shape: []int64{1, 1, 2, 1, 3}, values: []float64{1, 2, 3, 4, 5, 6}, writable: true},
	{file: "be_float32", dt: Float32, shape: []int64{3}, values: []float64{1, -2.5, float64(float32(1e-3))}},
	{file: "be_int16", dt: Int16, shape: []int64{2}, values: []float64{-2, 258}},
	{file: "be_float64", dt: Float64, shape: []int64{2}, values: []float64{0.1, -7}},
	{file: "be_uint64", dt: Uint64, shape: []int64{1}, u64: []uint64{0x0102030405060708}},
	{file: "fortran_float32", dt: Float32, shape: []int64{2, 3}, values: []float64{1, 2, 3, 4, 5, 6}},
	{file: "fortran_int32_2x3x2", dt: Int32, shape: []int64{2, 3, 2}, values: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
	{file: "v2_float32", dt: Float32, shape: []int64{2, 3}, values: []float64{1, 2, 3, -4.5, 0.25, math.Inf(1)}},
	{file: "v3_float32", dt: Float32, shape: []int64{2, 3}, values: []float64{1, 2, 3, -4.5, 0.25, math.Inf(1)}},
}

func goldenPath(name string) string { return filepath.Join("testdata", "npy", name+".npy") }

// expectedTensor builds the golden's tensor from its restated values.
func expectedTensor(t *testing.T, dt DType, shape []int64, values []float64, i64 []int64, u64 []uint64) *Tensor {
	x := New(dt, shape...)
	switch {
	case i64 != nil:
		copy(Data[int64](x), i64)
	case u64 != nil:
		copy(Data[uint64](x), u64)
	default:
		require.Len(t, values, int(x.NumElements()))
		for i, v := range values {
			x.SetFloat64(i, v)
		}
	}
	return x
}

func TestGoldenRead(t *testing.T) {
	for _, g := range golden {
		t.Run(g.file, func(t *testing.T) {
			got, err := ReadNpyFile(goldenPath(g.file))
			require.NoError(t, err)
			want := expectedTensor(t, g.dt, g.shape, g.values, g.i64, g.u64)
			assert.Equal(t, g.dt, got.DType)
			assert.Equal(t, g.shape, got.Shape)
			assert.Equal(t, want.Bytes(), got.Bytes(), "element bytes")
			for i, v := range g.values {
				assert.Equal(t, math.Float64bits(v), math.Float64bits(got.Float64At(i)), "element %d", i)
			}
		})
	}
}

func TestGoldenWriteIsNumPysLayout(t *testing.T) {
	for _, g := range golden {
		if !g.writable {
			continue
		}
		t.Run(g.file, func(t *testing.T) {
			want, err := os.ReadFile(goldenPath(g.file))
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, WriteNpy(&buf, expectedTensor(t, g.dt, g.shape, g.values, g.i64, g.u64)))
			require.Equal(t, want, buf.Bytes(), "WriteNpy differs from np.save's bytes")
			assert.Zero(t, bytes.IndexByte(want, '{')%2, "sanity")
		})
	}
	wide, err := os.ReadFile(filepath.Join("testdata", "npy", "wide_axis_float32.header"))
	require.NoError(t, err)
	assert.Equal(t, string(wide), string(NpyHeaderBytes(Float32, []int64{1234567})))
}

// Every header NumPy writes ends on a 64-byte boundary with a newline; a
// header too long for format 1.0 switches to 2.0.
func TestNpyHeaderAlignmentAndVersion(t *testing.T) {
	for nd := 0; nd <= 64; nd += 7 {
		shape := make([]int64, nd)
		for i := range shape {
			shape[i] = int64(i*977 + 1)
		}
		h := NpyHeaderBytes(Float64, shape)
		assert.Zero(t, len(h)%64)
		assert.Equal(t, byte('\n'), h[len(h)-1])
		assert.Equal(t, byte(1), h[6])
		hl := binary.LittleEndian.Uint16(h[8:10])
		assert.Equal(t, len(h)-10, int(hl))
	}
	// Headers are parsed back, whatever the version.
	for _, v := range []byte{2, 3} {
		h := NpyHeaderBytes(Int32, []int64{2, 2})
		body := h[10:]
		var b []byte
		b = append(b, npyMagic...)
		b = append(b, v, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
		b = append(b, make([]byte, 16)...)
		x, err := ReadNpy(bytes.NewReader(b))
		require.NoError(t, err)
		assert.Equal(t, []int64{2, 2}, x.Shape)
	}
}

// randomTensor fills a tensor with values that exercise the dtype's range.
func randomTensor(r *rand.Rand, dt DType, shape []int64) *Tensor {
	x := New(dt, shape...)
	b := x.Bytes()
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if dt == Bool {
		for i := range b {
			b[i] &= 1
		}
	}
	return x
}

func TestNpyRoundTripEveryDType(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := [][]int64{{}, {0}, {1}, {7}, {3, 5}, {2, 0, 3}, {2, 3, 4}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}
	dir := t.TempDir()
	for _, dt := range DTypes {
		for _, shape := range shapes {
			x := randomTensor(r, dt, shape)
			var buf bytes.Buffer
			require.NoError(t, WriteNpy(&buf, x))
			y, err := ReadNpy(&buf)
			require.NoError(t, err)
			require.Equal(t, dt, y.DType)
			require.Equal(t, shape, y.Shape)
			require.Equal(t, x.Bytes(), y.Bytes(), "%s%v", dt, shape)

			path := filepath.Join(dir, "x.npy")
			require.NoError(t, WriteNpyFile(path, x))
			z, err := ReadNpyFileAs(path, dt, shape)
			require.NoError(t, err)
			require.Equal(t, x.Bytes(), z.Bytes())
		}
	}
}

// An unknown-length stream (not a bytes.Reader) takes the growing path.
func TestNpyReadFromPlainStream(t *testing.T) {
	x := New(Float32, 5<<20) // 20 MiB > readChunk
	b := x.Bytes()
	seed := randomTensor(rand.New(rand.NewPCG(1, 1)), Uint8, []int64{4093}).Bytes()
	for i := 0; i < len(b); i += copy(b[i:], seed) {
	}
	var buf bytes.Buffer
	require.NoError(t, WriteNpy(&buf, x))
	whole := buf.Bytes()
	y, err := ReadNpy(struct{ io_Reader }{bytes.NewReader(whole)})
	require.NoError(t, err)
	require.True(t, bytes.Equal(x.Bytes(), y.Bytes()))
	_, err = ReadNpy(struct{ io_Reader }{bytes.NewReader(whole[:len(whole)-1])})
	require.ErrorIs(t, err, ErrNpy)
	assert.ErrorContains(t, err, "truncated data: the header promises float32 (5242880,) = 20971520 bytes, the stream has 20971519")
}

// io_Reader hides every method but Read.
type io_Reader interface{ Read([]byte) (int, error) }

func TestNpyBoolNormalized(t *testing.T) {
	b := append(NpyHeaderBytes(Bool, []int64{3}), 0, 2, 255)
	x, err := ReadNpy(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true}, Data[bool](x))
	assert.Equal(t, []byte{0, 1, 1}, x.Bytes())
}

// Fortran-order data of random shapes and element sizes converts to C
// order: element (i0..ik) is read from sum(i_j * prod(shape[:j])).
func TestNpyFortranOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dt := range []DType{Uint8, Float16, Int32, Float64} {
		sz := dt.Size()
		for range 40 {
			nd := 1 + r.IntN(4)
			shape := make([]int64, nd)
			n := 1
			for i := range shape {
				shape[i] = int64(r.IntN(5))
				n *= int(shape[i])
			}
			fdata := make([]byte, n*sz)
			for i := range fdata {
				fdata[i] = byte(r.Uint32())
			}
			hdr := strings.Replace(string(NpyHeaderBytes(dt, shape)), "False", "True ", 1)
			x, err := ReadNpy(bytes.NewReader(append([]byte(hdr), fdata...)))
			require.NoError(t, err)
			got := x.Bytes()
			// Independent reference: decode each C index into coordinates.
			for c := range n {
				rem, f, stride := c, 0, 1
				coords := make([]int, nd)
				for j := nd - 1; j >= 0; j-- {
					coords[j] = rem % int(shape[j])
					rem /= int(shape[j])
				}
				for j := range nd {
					f += coords[j] * stride
					stride *= int(shape[j])
				}
				require.Equal(t, fdata[f*sz:(f+1)*sz], got[c*sz:(c+1)*sz], "%s shape %v C index %d", dt, shape, c)
			}
		}
	}
}

func TestReadNpyFileAsMismatch(t *testing.T) {
	path := goldenPath("float32") // float32 (2, 3)
	_, err := ReadNpyFileAs(path, Float64, []int64{2, 3})
	require.ErrorIs(t, err, ErrNpy)
	assert.EqualError(t, err, path+": holds float32 (2, 3), expected float64 (2, 3)")
	_, err = ReadNpyFileAs(path, Float32, []int64{3, 2})
	assert.EqualError(t, err, path+": holds float32 (2, 3), expected float32 (3, 2)")
	_, err = ReadNpyFileAs(path, Float32, []int64{2})
	assert.EqualError(t, err, path+": holds float32 (2, 3), expected float32 (2,)")
	_, err = ReadNpyFileAs(path, Float32, []int64{-1, 4})
	assert.EqualError(t, err, path+": holds float32 (2, 3), expected float32 (?, 4)")
	x, err := ReadNpyFileAs(path, Float32, []int64{-1, 3})
	require.NoError(t, err, "-1 matches a symbolic dimension")
	assert.Equal(t, []int64{2, 3}, x.Shape)
	_, err = ReadNpyFileAs(path, Invalid, nil)
	assert.Error(t, err)
	assert.NoError(t, CheckTensor(x, Float32, []int64{2, -1}))
	assert.EqualError(t, CheckTensor(x, Int32, nil), "holds float32 (2, 3), expected int32")
	_, err = ReadNpyFile(filepath.Join("testdata", "npy", "missing.npy"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Every prefix of a valid file is an error (never a panic, never a tensor).
func TestNpyTruncatedEverywhere(t *testing.T) {
	for _, name := range []string{"float32", "v3_float32", "be_uint64", "fortran_int32_2x3x2"} {
		whole, err := os.ReadFile(goldenPath(name))
		require.NoError(t, err)
		dir := t.TempDir()
		for n := range len(whole) {
			_, err := ReadNpy(bytes.NewReader(whole[:n]))
			require.ErrorIs(t, err, ErrNpy, "%s[:%d]", name, n)
			msg := err.Error()
			require.True(t, strings.Contains(msg, "truncated") || strings.Contains(msg, "not a .npy"), "%s[:%d]: %v", name, n, err)
			if n%17 == 0 {
				p := filepath.Join(dir, "t.npy")
				require.NoError(t, os.WriteFile(p, whole[:n], 0o644))
				_, err = ReadNpyFile(p)
				require.ErrorContains(t, err, p+": ")
			}
		}
	}
	whole, _ := os.ReadFile(goldenPath("float32"))
	dir := t.TempDir()
	p := filepath.Join(dir, "long.npy")
	require.NoError(t, os.WriteFile(p, append(whole, 1, 2, 3), 0o644))
	_, err := ReadNpyFile(p)
	assert.EqualError(t, err, p+": 3 unexpected bytes after the data (the header promises float32 (2, 3) = 24 bytes)")
	p = filepath.Join(dir, "short.npy")
	require.NoError(t, os.WriteFile(p, whole[:len(whole)-5], 0o644))
	_, err = ReadNpyFile(p)
	assert.EqualError(t, err, p+": truncated data: the header promises float32 (2, 3) = 24 bytes, the file has 19")
}

func npyWithHeader(major byte, dict string) []byte {
	b := append([]byte(npyMagic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	return append(b, dict...)
}

func TestNpyCorruptHeaders(t *testing.T) {
	cases := map[string]struct {
		file []byte
		want string
	}{
		"magic":        {[]byte("\x93NUMPZ\x01\x00\x00\x00"), "not a .npy file: starts with"},
		"version":      {append([]byte(npyMagic), 4, 0, 0, 0), "unsupported .npy format version 4.0"},
		"minor":        {append([]byte(npyMagic), 1, 1, 0, 0), "unsupported .npy format version 1.1"},
		"huge header":  {append([]byte(npyMagic), 2, 0, 0xff, 0xff, 0xff, 0x7f), "header length 2147483647 exceeds"},
		"not a dict":   {npyWithHeader(1, "[1, 2]\n"), "header byte 0: expected '{'"},
		"no shape":     {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False}\n"), "lacks the key \"shape\""},
		"unknown key":  {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}\n"), "header byte 54: unexpected key \"x\""},
		"dup key":      {npyWithHeader(1, "{'descr': '<f4', 'descr': '<f4'}\n"), "duplicate key \"descr\""},
		"complex":      {npyWithHeader(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}\n"), "unsupported dtype descr \"<c8\""},
		"object":       {npyWithHeader(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,)}\n"), "unsupported dtype descr \"|O\""},
		"long double":  {npyWithHeader(1, "{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}\n"), "unsupported dtype descr \"<f16\""},
		"structured":   {npyWithHeader(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}\n"), "structured dtypes"},
		"byte order":   {npyWithHeader(1, "{'descr': '!f4', 'fortran_order': False, 'shape': (1,)}\n"), "byte order must be"},
		"fortran val":  {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}\n"), "'fortran_order' must be True or False"},
		"neg dim":      {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}\n"), "non-negative integer dimension"},
		"not tuple":    {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}\n"), "one-element tuple is written (n,)"},
		"huge dim":     {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n"), "out of range"},
		"huge shape":   {npyWithHeader(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 2)}\n"), "more than"},
		"unterminated": {npyWithHeader(1, "{'descr': '<f4"), "unterminated string"},
		"open dict":    {npyWithHeader(1, "{'descr': '<f4', "), "expected a quoted string"},
		"trailing":     {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()} x\n"), "unexpected \"x\\n\" after the header dict"},
		"bad utf8 v3":  {npyWithHeader(3, "{'descr': '\xff', 'fortran_order': False, 'shape': ()}\n"), "not valid UTF-8"},
		"too many dims": {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Repeat("1,", 65)+")}\n"),
			"more than 64 dimensions"},
	}
	for name, c := range cases {
		_, err := ReadNpy(bytes.NewReader(c.file))
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrNpy, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}

// Headers other writers produce: double quotes, other key orders, no
// trailing comma, no newline, Python 2 longs, '=' byte order.
func TestNpyLenientHeaders(t *testing.T) {
	data := []byte{1, 0, 2, 0}
	for _, dict := range []string{
		`{"shape": (2,), "descr": "<i2", "fortran_order": False}`,
		"{'descr':'<i2','fortran_order':False,'shape':(2L,)}   ",
		"{ 'fortran_order' : False , 'shape' : ( 2 , ) , 'descr' : '=i2' , }\n",
	} {
		x, err := ReadNpy(bytes.NewReader(append(npyWithHeader(1, dict), data...)))
		require.NoError(t, err, dict)
		assert.Equal(t, []int16{1, 2}, Data[int16](x), dict)
	}
}

func TestNpzRoundTripAndGolden(t *testing.T) {
	want := []Named{
		{"w", expectedTensor(t, Float32, []int64{2, 3}, []float64{1, 2, 3, -4.5, 0.25, math.Inf(1)}, nil, nil)},
		{"b", expectedTensor(t, Int64, []int64{2}, nil, []int64{math.MinInt64, math.MaxInt64}, nil)},
		{"mask", expectedTensor(t, Bool, []int64{2, 3}, []float64{1, 0, 1, 1, 0, 0}, nil, nil)},
	}
	cmpNamed := cmp.Comparer(func(a, b *Tensor) bool {
		return a.DType == b.DType && cmp.Equal(a.Shape, b.Shape) && bytes.Equal(a.Bytes(), b.Bytes())
	})
	for _, f := range []string{"arrays_stored.npz", "arrays_deflated.npz"} {
		got, err := ReadNpz(filepath.Join("testdata", f))
		require.NoError(t, err, f)
		assert.Empty(t, cmp.Diff(want, got, cmpNamed), "%s: (-want +got)", f)
	}
	r := rand.New(rand.NewPCG(9, 9))
	var all []Named
	for _, dt := range DTypes {
		all = append(all, Named{dt.String(), randomTensor(r, dt, []int64{3, int64(r.IntN(5))})})
	}
	dir := t.TempDir()
	for _, compressed := range []bool{false, true} {
		p := filepath.Join(dir, "a.npz")
		if compressed {
			require.NoError(t, WriteNpzCompressed(p, all))
		} else {
			require.NoError(t, WriteNpz(p, all))
		}
		got, err := ReadNpz(p)
		require.NoError(t, err)
		assert.Empty(t, cmp.Diff(all, got, cmpNamed), "compressed=%v: (-want +got)", compressed)
	}
	assert.Error(t, WriteNpz(filepath.Join(dir, "dup.npz"), []Named{all[0], all[0]}))
}

func TestNpzBadInput(t *testing.T) {
	stored, err := os.ReadFile(filepath.Join("testdata", "arrays_stored.npz"))
	require.NoError(t, err)
	deflated, err := os.ReadFile(filepath.Join("testdata", "arrays_deflated.npz"))
	require.NoError(t, err)
	for _, whole := range [][]byte{stored, deflated} {
		for n := 0; n < len(whole); n += 7 {
			_, err := readNpzBytes(whole[:n])
			require.Error(t, err, n)
		}
		// Flip bytes inside the entries' data: CRC or format errors, not panics.
		for i := 40; i < len(whole)-200; i += 13 {
			c := bytes.Clone(whole)
			c[i] ^= 0x5a
			_, err := readNpzBytes(c)
			if err != nil {
				require.ErrorIs(t, err, ErrNpy, "byte %d: %v", i, err)
			}
		}
	}
	_, err = readNpzBytes([]byte("not a zip"))
	assert.ErrorContains(t, err, "not a valid .npz (zip) archive")

	var buf bytes.Buffer
	require.NoError(t, zipEntry(&buf, "notes.txt", []byte("hi")))
	_, err = readNpzBytes(buf.Bytes())
	assert.ErrorContains(t, err, "entry \"notes.txt\" is not a .npy array")
	buf.Reset()
	require.NoError(t, zipEntry(&buf, "x.npy", append(NpyHeaderBytes(Float32, []int64{4}), 1, 2, 3)))
	_, err = readNpzBytes(buf.Bytes())
	assert.ErrorContains(t, err, "entry \"x.npy\": truncated data: the header promises float32 (4,) = 16 bytes, the stream has 3")

	p := filepath.Join(t.TempDir(), "bad.npz")
	require.NoError(t, os.WriteFile(p, stored[:100], 0o644))
	_, err = ReadNpz(p)
	assert.ErrorContains(t, err, p+": ")
	assert.True(t, errors.Is(err, ErrNpy))
}

// Several np.save calls into one file: ReadNpy reads them one at a time.
func TestReadNpyConsecutiveArrays(t *testing.T) {
	a, err := FromSlice([]int16{1, 2, 3})
	require.NoError(t, err)
	b, err := FromSlice([]float64{0.5, 1.5}, 1, 2)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteNpy(&buf, a))
	require.NoError(t, WriteNpy(&buf, b))
	r := bytes.NewReader(buf.Bytes())
	x, err := ReadNpy(r)
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 2, 3}, Data[int16](x))
	y, err := ReadNpyAs(r, Float64, []int64{1, -1})
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 1.5}, Data[float64](y))
	_, err = ReadNpy(r)
	assert.ErrorContains(t, err, "not a .npy file: 0 bytes")
}

func TestCheckPatterns(t *testing.T) {
	x := New(Float32, 2, 3)
	assert.NoError(t, CheckTensor(x, Float32, []int64{-1, -10}), "any negative dimension is a wildcard")
	assert.EqualError(t, CheckTensor(x, Float32, []int64{-1, 4}), "holds float32 (2, 3), expected float32 (?, 4)")
	assert.EqualError(t, CheckTensor(x, Int8, []int64{-1}), "holds float32 (2, 3), expected int8 (?,)")
	assert.EqualError(t, CheckTensor(x, Float32, []int64{}), "holds float32 (2, 3), expected float32 ()")
}
