package kernel

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunChunkedCoversOnce: every element of [0, total) is visited
// exactly once, in whole units, whatever the split, including calls made
// concurrently (helpers sent to one call may join another) and totals
// that are not a multiple of the chunk.
func TestRunChunkedCoversOnce(t *testing.T) {
	workersOnce.Do(startWorkers)
	workers := int64(max(2, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range []struct{ total, unit int64 }{{1, 1}, {7, 7}, {10, 1}, {97, 1}, {1000, 8}, {4096, 64}, {12345, 5}} {
				seen := make([]atomic.Int32, c.total)
				fr := &frame{}
				runChunked(fr, c.total, c.unit, workers, func(_ *frame, lo, hi int64) {
					if lo%c.unit != 0 || (hi%c.unit != 0 && hi != c.total) {
						panic(fmt.Sprintf("chunk [%d, %d) not in whole units of %d", lo, hi, c.unit))
					}
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				})
				for i := range seen {
					if n := seen[i].Load(); n != 1 {
						t.Errorf("goroutine %d, total %d: element %d visited %d times", g, c.total, i, n)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestRunChunkedPanics: a panic in any chunk reaches the caller, after
// every helper has left (the next call works).
func TestRunChunkedPanics(t *testing.T) {
	workersOnce.Do(startWorkers)
	fr := &frame{}
	require.PanicsWithValue(t, "boom", func() {
		runChunked(fr, 1000, 1, 2, func(_ *frame, lo, hi int64) {
			if lo <= 900 && 900 < hi {
				panic("boom")
			}
		})
	})
	var n atomic.Int64
	runChunked(fr, 1000, 1, 2, func(_ *frame, lo, hi int64) { n.Add(hi - lo) })
	require.Equal(t, int64(1000), n.Load())
}
