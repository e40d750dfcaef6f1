package tensor

import "testing"

var sinkF32 []float32

func BenchmarkData(b *testing.B) {
	x := New(Float32, 64, 64)
	b.ReportAllocs()
	for b.Loop() {
		sinkF32 = Data[float32](x)
	}
}
