package tensor

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSizeClass(t *testing.T) {
	for n, want := range map[int64]int64{0: 64, 1: 64, 64: 64, 65: 128, 100: 128, 1000: 1024, 4096: 4096, 4097: 8192, 8192: 8192, 10000: 12288} {
		assert.Equal(t, want, sizeClass(n), "%d", n)
	}
}

func TestNaiveAllocatorCounts(t *testing.T) {
	a := NewNaiveAllocator()
	s1, err := a.Alloc(100)
	require.NoError(t, err)
	s2, err := a.Alloc(50)
	require.NoError(t, err)
	assert.Len(t, s1.Bytes(), 100)
	assert.Zero(t, uintptr(unsafe.Pointer(&s2.Bytes()[0]))%Alignment)
	assert.Equal(t, Stats{Live: 150, Peak: 150, Allocs: 2}, a.Stats())
	a.Free(s1)
	s3, err := a.Alloc(100)
	require.NoError(t, err)
	assert.NotSame(t, &s1.Bytes()[0], &s3.Bytes()[0], "naive never reuses")
	a.Free(s2)
	a.Free(s3)
	assert.Equal(t, Stats{Live: 0, Peak: 150, Allocs: 3, Frees: 3}, a.Stats())
	_, err = a.Alloc(-1)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.PanicsWithValue(t, "tensor: storage freed twice", func() { a.Free(s3) })
	assert.Panics(t, func() { a.Free(NewStorage(4)) })
}

func TestPooledAllocatorReusesBySizeClass(t *testing.T) {
	a := NewPooledAllocator()
	s1, err := a.Alloc(100) // class 128
	require.NoError(t, err)
	copy(s1.Bytes(), "hello")
	p1 := &s1.Bytes()[0]
	a.Free(s1)
	assert.Equal(t, Stats{Live: 0, Peak: 128, Allocs: 1, Frees: 1, Cached: 128}, a.Stats())

	s2, err := a.Alloc(70) // also class 128: reuses s1's buffer, not zeroed
	require.NoError(t, err)
	assert.Same(t, p1, &s2.Bytes()[0])
	assert.Len(t, s2.Bytes(), 70)
	assert.Equal(t, 70, cap(s2.Bytes()), "the rest of the size class is not reachable")
	assert.Equal(t, "hello", string(s2.Bytes()[:5]), "reused memory is not cleared (as in TVM)")
	s3, err := a.Alloc(200) // class 256: fresh
	require.NoError(t, err)
	assert.Equal(t, Stats{Live: 384, Peak: 384, Allocs: 3, Frees: 1, Reuses: 1}, a.Stats())
	assert.Zero(t, uintptr(unsafe.Pointer(&s3.Bytes()[0]))%Alignment)

	a.Free(s2)
	a.Free(s3)
	a.(*PooledAllocator).ReleaseAll()
	s4, err := a.Alloc(100)
	require.NoError(t, err)
	assert.Equal(t, Stats{Live: 128, Peak: 384, Allocs: 4, Frees: 3, Reuses: 1}, a.Stats())
	assert.Zero(t, s4.Bytes()[0], "after ReleaseAll memory is fresh")
	assert.Panics(t, func() { NewNaiveAllocator().Free(s4) }, "another allocator's storage")
	a.Free(s4)
	assert.Panics(t, func() { a.Free(s4) })
}

func TestAllocTensorFromAllocator(t *testing.T) {
	a := NewPooledAllocator()
	x, err := Alloc(a, Float32, []int64{3, 5})
	require.NoError(t, err)
	assert.Len(t, Data[float32](x), 15)
	assert.Equal(t, int64(64), a.Stats().Live)
	_, err = Alloc(a, Float32, []int64{-3})
	assert.Error(t, err)
	a.Free(x.Storage)
}

// Concurrent Alloc/Free keeps the counters consistent and never hands one
// buffer to two owners at once (run with -race).
func TestAllocatorsConcurrent(t *testing.T) {
	for name, a := range map[string]Allocator{"naive": NewNaiveAllocator(), "pooled": NewPooledAllocator()} {
		t.Run(name, func(t *testing.T) {
			const workers, rounds = 8, 300
			var wg sync.WaitGroup
			errs := make(chan string, workers)
			for w := range workers {
				wg.Go(func() {
					for r := range rounds {
						n := int64(1 + (w*131+r*17)%5000)
						s, err := a.Alloc(n)
						if err != nil {
							errs <- err.Error()
							return
						}
						b := s.Bytes()
						for i := range b {
							b[i] = byte(w)
						}
						for i := range b {
							if b[i] != byte(w) {
								errs <- "buffer shared between two live owners"
								return
							}
						}
						a.Free(s)
					}
				})
			}
			wg.Wait()
			close(errs)
			var failures []string
			for e := range errs {
				failures = append(failures, e)
			}
			require.Empty(t, failures)
			st := a.Stats()
			assert.Equal(t, int64(workers*rounds), st.Allocs)
			assert.Equal(t, int64(workers*rounds), st.Frees)
			assert.Zero(t, st.Live)
			assert.LessOrEqual(t, st.Peak, int64(workers*8192))
			if name == "pooled" {
				assert.Positive(t, st.Reuses)
			}
		})
	}
}
