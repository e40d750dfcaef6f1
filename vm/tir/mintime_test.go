package tir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/phasec/phasec/vm/tensor"
	"github.com/phasec/phasec/vm/tir"
)

func minPair(n int, a, b func()) (time.Duration, time.Duration) {
	ba, bb := time.Hour, time.Hour
	for range n {
		t0 := time.Now()
		a()
		ba = min(ba, time.Since(t0))
		t0 = time.Now()
		b()
		bb = min(bb, time.Since(t0))
	}
	return ba, bb
}

func TestMinTimeAll(t *testing.T) {
	if !testing.Verbose() {
		t.Skip()
	}
	for _, sz := range [][2]int64{{4096, 4096}, {256, 256}} {
		rows, cols := sz[0], sz[1]
		k, _ := tir.Compile(parseFunc(t, fmt.Sprintf(broadcastAddSrc, cols), "add"), "add")
		A, B, C := randTensor(rows, cols), randTensor(cols), tensor.New(tensor.Float32, rows, cols)
		args := []tir.Arg{{T: A}, {T: B}, {T: C}}
		a, bb, c := tensor.Data[float32](A), tensor.Data[float32](B), tensor.Data[float32](C)
		n := 40
		if rows < 1000 {
			n = 3000
		}
		tk, tc := minPair(n, func() { k.Call(args) }, func() { copy(c, a) })
		_, tg := minPair(n, func() {}, func() {
			for i := int64(0); i < rows; i++ {
				for j := int64(0); j < cols; j++ {
					c[i*cols+j] = a[i*cols+j] + bb[j]
				}
			}
		})
		gb := float64(rows*cols*8) / 1e9
		t.Logf("broadcast add %dx%d: tir %v (%.1f GB/s) copy %v (%.1f GB/s) tir/copy bandwidth %.2f; goloop %v, speedup %.2fx",
			rows, cols, tk, gb/tk.Seconds(), tc, gb/tc.Seconds(), tc.Seconds()/tk.Seconds(), tg, tg.Seconds()/tk.Seconds())
	}
	{
		const rows, cols = 256, 1024
		k, _ := tir.Compile(parseFunc(t, layerNormSrc, "layer_norm"), "layer_norm")
		A, G, Bt, O := randTensor(rows, cols), randTensor(cols), randTensor(cols), tensor.New(tensor.Float32, rows, cols)
		args := []tir.Arg{{T: A}, {T: G}, {T: Bt}, {T: O}}
		tk, th := minPair(300, func() { k.Call(args) }, func() {
			layerNormGo(tensor.Data[float32](A), tensor.Data[float32](G), tensor.Data[float32](Bt), tensor.Data[float32](O), rows, cols)
		})
		t.Logf("layer norm %dx%d: tir %v hand %v ratio %.2f (pattern %s)", rows, cols, tk, th, tk.Seconds()/th.Seconds(), k.Pattern())
	}
	{
		const rows, cols = 256, 1024
		k, _ := tir.Compile(parseFunc(t, softmaxSrc, "softmax"), "softmax")
		A, O := randTensor(rows, cols), tensor.New(tensor.Float32, rows, cols)
		args := []tir.Arg{{T: A}, {T: O}}
		tk, th := minPair(300, func() { k.Call(args) }, func() {
			softmaxGo(tensor.Data[float32](A), tensor.Data[float32](O), rows, cols)
		})
		t.Logf("softmax %dx%d: tir %v hand %v ratio %.2f (pattern %s)", rows, cols, tk, th, tk.Seconds()/th.Seconds(), k.Pattern())
	}
	{
		f := loadFunc(t, "tir_matmul_reduction.tvms", "matmul")
		best := time.Hour
		for range 2000 {
			t0 := time.Now()
			tir.Compile(f, "matmul")
			best = min(best, time.Since(t0))
		}
		t.Logf("compile 3-loop matmul: %v", best)
	}
}
