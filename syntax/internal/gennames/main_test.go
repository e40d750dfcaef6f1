package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckedInFileIsUpToDate fails when syntax/tvm_names.go differs from
// what go generate ./syntax writes from the source list.
func TestCheckedInFileIsUpToDate(t *testing.T) {
	syntaxDir := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(syntaxDir, sourcePath))
	require.NoError(t, err)
	want, err := generate(src)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(syntaxDir, outputPath))
	require.NoError(t, err)
	assert.Empty(t, cmp.Diff(string(want), string(got)), "syntax/%s is stale; run go generate ./syntax (-generated +checked in)", outputPath)
}

func TestParseSignature(t *testing.T) {
	tests := []struct {
		line string
		want signature
	}{
		{"R.null_value()", signature{"R.null_value", []string{}}},
		{"R.add(x1, x2)", signature{"R.add", []string{"x1", "x2"}}},
		{"R.call_builtin_with_ctx(func, args, *, sinfo_args=None)",
			signature{"R.call_builtin_with_ctx", []string{"func", "args", "sinfo_args"}}},
		{"R.call_packed(func, *args, sinfo_args=None, **kwargs)",
			signature{"R.call_packed", []string{"func", "*args", "sinfo_args", "**kwargs"}}},
		{"R.nn.max_pool2d(data, pool_size=(1, 1), layout='N,C', out_layout=None)",
			signature{"R.nn.max_pool2d", []string{"data", "pool_size", "layout", "out_layout"}}},
	}
	for _, tc := range tests {
		got, err := parseSignature(tc.line)
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.want, got, tc.line)
	}
	for _, bad := range []string{"add(x1, x2)", "R.add", "R.add(x1,, x2)"} {
		_, err := parseSignature(bad)
		assert.Error(t, err, bad)
	}
}

func TestFirstSignatureWins(t *testing.T) {
	src := "R.f(a, b)\n# later definitions of a name are ignored\nR.f(c)\nall: f\n"
	sigs, names, err := parseList([]byte(src))
	require.NoError(t, err)
	assert.Equal(t, []signature{{"R.f", []string{"a", "b"}}}, sigs)
	assert.Equal(t, []string{"f"}, names)
}
