package vm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildWide makes an executable of n functions, each checking its argument,
// calling the previous function and returning: ~10 instructions apiece.
func buildWide(tb testing.TB, n int) []byte {
	b := NewBuilder()
	for i := 0; i < n; i++ {
		b.BeginFunc(fmt.Sprintf("f%d", i), []string{"x"})
		r := b.NewReg()
		ctx := ConstArg(b.Const(Constant{Kind: ConstString, Str: fmt.Sprintf("ErrorContext(fn=f%d)", i)}))
		b.CallPacked(RegVoid, "vm.builtin.check_tensor_info", []Arg{RegArg(0), ImmArg(2), ctx}, Pos{File: "wide.tvms", Line: i + 1, Col: 5})
		b.CallPacked(RegVoid, "vm.builtin.match_shape", []Arg{RegArg(0), RegArg(RegVoid), ImmArg(2), ImmArg(0), ImmArg(4), ImmArg(0), ImmArg(4), ctx}, Pos{File: "wide.tvms", Line: i + 1, Col: 9})
		if i > 0 {
			b.Call(r, b.FuncRef(fmt.Sprintf("f%d", i-1)), []Arg{RegArg(0)}, Pos{})
		} else {
			b.CallPacked(r, "vm.builtin.copy", []Arg{RegArg(0)}, Pos{})
		}
		for j := 0; j < 6; j++ {
			b.CallPacked(r, "vm.builtin.copy", []Arg{RegArg(r)}, Pos{})
		}
		b.Ret(r, Pos{})
		b.EndFunc()
	}
	exe, err := b.Finish()
	require.NoError(tb, err)
	return exe.Marshal()
}

// BenchmarkLoad decodes, validates and links executables of 100, 1000 and
// 10000 functions; ns/func should stay flat (linear load time).
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		data := buildWide(b, n)
		b.Run(fmt.Sprintf("funcs=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				exe, err := Unmarshal(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := New(exe, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/func")
		})
	}
}
