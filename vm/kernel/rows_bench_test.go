package kernel_test

import (
	"slices"
	"testing"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// BenchmarkRowKernelsSideBySide times, interleaved in every iteration, the
// general path, the dispatched kernel and copy() of (input bytes + output
// bytes) / 2 (the roofline: a row kernel reads each input and writes its
// output once, and copy reads and writes each byte once) for the non-GEMM
// kernels of a BERT-base layer at sequence length 128 and the other row
// and data-movement kernels (testdata/tir_row_bench.tvms: RMS norm,
// log-softmax, sums over the last and the first axis, a transpose, an
// add + relu chain over 56-element rows), and reports medians: µs-wall of the dispatched
// kernel, x-general (general time / dispatched time), copy-frac (copy time
// / dispatched time: the fraction of copy bandwidth reached), and, from
// the process's CPU time, µs-cpu, x-general-cpu and copy-frac-cpu (on a
// shared machine the CPU time excludes descheduling; with several cores it
// sums them):
//
//	go test ./vm/kernel -run '^$' -bench RowKernelsSideBySide -benchtime 20x -cpu 1,2
func BenchmarkRowKernelsSideBySide(b *testing.B) {
	for _, k := range []struct{ file, name string }{
		{"tir_bert_rows.tvms", "layer_norm"}, {"tir_bert_rows.tvms", "gelu"}, {"tir_bert_rows.tvms", "softmax"},
		{"tir_row_bench.tvms", "rms_norm"}, {"tir_row_bench.tvms", "log_softmax"},
		{"tir_row_bench.tvms", "sum"}, {"tir_row_bench.tvms", "sum1"},
		{"tir_row_bench.tvms", "permute_dims"}, {"tir_row_bench.tvms", "fused_add_relu"},
	} {
		name := k.name
		b.Run(name, func(b *testing.B) {
			f := loadTestdataFunc(b, k.file, name)
			fast, err := kernel.Compile(f, name)
			if err != nil {
				b.Fatal(err)
			}
			general, err := kernel.CompileWith(f, name, kernel.Options{General: true})
			if err != nil {
				b.Fatal(err)
			}
			var args []abi.Arg
			moved := 0 // input and output bytes
			for _, p := range f.Params {
				buf := f.BufferMap[p]
				shape := make([]int64, len(buf.Shape))
				for d, e := range buf.Shape {
					shape[d] = e.(*ir.IntImm).Value
				}
				t := randTensor(shape...)
				args = append(args, abi.Arg{T: t})
				moved += len(t.Bytes())
			}
			src, dst := make([]byte, moved/2), make([]byte, moved/2)
			runs := []func(){
				func() { must(b, general.Call(args)) },
				func() { must(b, fast.Call(args)) },
				func() { copy(dst, src) },
			}
			var wall, cpu [3][]float64
			for range b.N {
				for i, run := range runs {
					c0, t0 := processCPUTime(), time.Now()
					run()
					wall[i] = append(wall[i], float64(time.Since(t0)))
					cpu[i] = append(cpu[i], float64(processCPUTime()-c0))
				}
			}
			for i := range runs {
				slices.Sort(wall[i])
				slices.Sort(cpu[i])
			}
			med := func(x []float64) float64 { return x[len(x)/2] }
			b.ReportMetric(med(wall[1])/1e3, "µs-wall")
			b.ReportMetric(med(wall[0])/med(wall[1]), "x-general")
			b.ReportMetric(med(wall[2])/med(wall[1]), "copy-frac")
			if med(cpu[1]) > 0 {
				b.ReportMetric(med(cpu[1])/1e3, "µs-cpu")
				b.ReportMetric(med(cpu[0])/med(cpu[1]), "x-general-cpu")
				b.ReportMetric(med(cpu[2])/med(cpu[1]), "copy-frac-cpu")
			}
		})
	}
}

func must(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}
