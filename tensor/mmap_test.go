package tensor

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenNpyFileMapsLargeFiles(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 3))
	x := randomTensor(r, Float32, []int64{512, 1024}) // 2 MiB
	p := filepath.Join(dir, "big.npy")
	require.NoError(t, WriteNpyFile(p, x))
	m, err := OpenNpyFile(p, Float32, []int64{-1, 1024})
	require.NoError(t, err)
	assert.Equal(t, mmapSupported, m.Mapped())
	assert.Equal(t, []int64{512, 1024}, m.Shape)
	require.True(t, bytes.Equal(x.Bytes(), m.Bytes()))
	assert.Zero(t, uintptr(unsafe.Pointer(&m.Bytes()[0]))%Alignment)

	// Writes are private: the file keeps its contents.
	Data[float32](m.Tensor)[0] = 12345
	again, err := ReadNpyFile(p)
	require.NoError(t, err)
	assert.Equal(t, Data[float32](x)[0], Data[float32](again)[0])
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.Nil(t, m.Tensor)

	_, err = OpenNpyFile(p, Float64, nil)
	assert.EqualError(t, err, p+": holds float32 (512, 1024), expected float64")

	// A truncated large file is an error, not a mapping past the end.
	whole, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, whole[:len(whole)-4], 0o644))
	_, err = OpenNpyFile(p, Invalid, nil)
	assert.ErrorContains(t, err, p+": truncated data")
}

func TestOpenNpyFileCopiesWhenMappingCannotHelp(t *testing.T) {
	for _, name := range []string{"float32", "be_float32", "fortran_float32", "bool"} {
		m, err := OpenNpyFile(goldenPath(name), Invalid, nil)
		require.NoError(t, err, name)
		assert.False(t, m.Mapped(), name)
		want, err := ReadNpyFile(goldenPath(name))
		require.NoError(t, err)
		assert.Equal(t, want.Bytes(), m.Bytes(), name)
		assert.NoError(t, m.Close())
	}
	big := New(Bool, 2<<20)
	p := filepath.Join(t.TempDir(), "bool.npy")
	require.NoError(t, WriteNpyFile(p, big))
	m, err := OpenNpyFile(p, Bool, nil)
	require.NoError(t, err)
	assert.False(t, m.Mapped(), "bool bytes may need normalizing, so they are copied")
}
