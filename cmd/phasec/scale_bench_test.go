package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir/irgen"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkOptScale runs the whole `phasec opt --passes canonicalize,lower`
// command (read, parse, passes with their barriers, print) on the parser
// benchmark's module of 10k, 100k and 1M bindings. The command must be
// linear: read the 1M/100k and 100k/10k time ratios (<= 11) and B/op. The
// 1M case takes tens of seconds per iteration; select it or skip it with
// -bench 'OptScale/bindings=(10000|100000)$'. Peak memory is measured on
// the built binary (/usr/bin/time -v), where main sets the soft memory
// limit (memlimit.go).
func BenchmarkOptScale(b *testing.B) {
	benchScale(b, "opt", "--passes", "canonicalize,lower")
}

// BenchmarkFmtScale runs `phasec fmt` (read, parse, print) on the same
// modules, with the same linearity target.
func BenchmarkFmtScale(b *testing.B) { benchScale(b, "fmt") }

// benchScale runs a command on irgen.ChainSource modules of 10k, 100k and
// 1M bindings, the module file last among args.
func benchScale(b *testing.B, cmd string, args ...string) {
	dir := b.TempDir()
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			path := filepath.Join(dir, fmt.Sprintf("chain%d.tvms", n))
			src := irgen.ChainSource(n)
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			src = "" // the command reads the file; this copy need not stay live
			b.ReportAllocs()
			var errs strings.Builder
			for b.Loop() {
				errs.Reset()
				if code := run(append(append([]string{cmd}, args...), path), nil, io.Discard, &errs); code != 0 {
					b.Fatalf("exit %d: %s", code, errs.String())
				}
			}
		})
	}
}

// TestOptScaleModule keeps the benchmark honest on a small module: the
// command succeeds and legalizes the three ops into three PrimFuncs, called
// each binding writing a fresh allocation.
func TestOptScaleModule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.tvms")
	require.NoError(t, os.WriteFile(path, []byte(irgen.ChainSource(30)), 0o644))
	var out, errs strings.Builder
	code := run([]string{"opt", "--passes", "canonicalize,lower", path}, nil, &out, &errs)
	require.Equal(t, 0, code, "exit code: %s", errs.String())
	got := out.String()
	assert.Equal(t, 3, strings.Count(got, "@T.prim_func"), "PrimFuncs, want 3 (add, multiply, relu):\n%s", got)
	assert.Equal(t, 31, strings.Count(got, "R.builtin.alloc_tensor("), "output allocations, want 31 (30 bindings and gv)")
}
