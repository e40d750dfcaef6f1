package barrier_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/wellformed"
)

// FuzzCompile drives the whole front half of the compiler on any input the
// parser accepts without diagnostics: the checker in every phase, Infer,
// the three barriers and the printer must not panic (a recovered panic
// shows up as a PassError with Panic set or an internal diagnostic, and
// counts as a failure too); barriers may refuse with an error. The printed
// result of a successful Canonicalize must parse back without diagnostics
// to a structurally equal module.
//
//	go test ./barrier -run='^$' -fuzz=FuzzCompile -fuzztime=1m
func FuzzCompile(f *testing.F) {
	n := 0
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tvms") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f.Add(src)
		n++
		return nil
	})
	require.NoError(f, err)
	require.NotZero(f, n, "no .tvms seeds under ../testdata")
	f.Fuzz(func(t *testing.T, src []byte) {
		done := make(chan struct{})
		var failure string
		go func() {
			defer close(done)
			defer func() {
				if r := recover(); r != nil {
					failure = "panic: " + strings.TrimSpace(toString(r)) + "\n" + string(debug.Stack())
				}
			}()
			failure = compileOnce(src)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			require.Failf(t, "timeout", "compiling did not finish in 20s on %q", clip(string(src)))
		}
		require.Empty(t, failure, "input:\n%s", clip(string(src)))
	})
}

// compileOnce runs every stage on src and returns a description of the
// first broken property, or "".
func compileOnce(src []byte) string {
	mod, diags := syntax.Parse("fuzz.tvms", src)
	if mod == nil || len(diags) > 0 {
		return ""
	}
	for _, p := range append([]phase.Phase{phase.None}, phase.Phases()...) {
		if msg := internalDiag(wellformed.Check(mod, p)); msg != "" {
			return "wellformed.Check(" + p.String() + "): " + msg
		}
	}
	_ = wellformed.Infer(mod)
	_ = printer.Print(mod)

	canon, err := barrier.Canonicalize(mod)
	if msg := internalErr(err); msg != "" {
		return "Canonicalize: " + msg
	}
	if err != nil {
		return ""
	}
	printed := printer.Print(canon)
	back, diags := syntax.Parse("canonical.tvms", []byte(printed))
	if len(diags) > 0 || back == nil {
		return "the printed Canonicalize result does not parse:\n" + diags.Error() + "\nprinted:\n" + printed
	}
	if m := ir.Diff(canon, back, ir.EqualOptions{}); m != nil {
		return "the printed Canonicalize result parses to a different module: " + m.String() + "\nprinted:\n" + printed
	}

	lowered, err := barrier.Lower(canon)
	if msg := internalErr(err); msg != "" {
		return "Lower: " + msg
	}
	if err != nil {
		return ""
	}
	_ = printer.Print(lowered)
	built, err := barrier.Build(lowered)
	if msg := internalErr(err); msg != "" {
		return "Build: " + msg
	}
	if err == nil {
		_ = printer.Print(built)
	}
	return ""
}

// internalErr reports a recovered panic or an internal diagnostic inside a
// barrier error.
func internalErr(err error) string {
	if err == nil {
		return ""
	}
	var pe *passes.PassError
	if errors.As(err, &pe) && pe.Panic {
		return pe.Error() + "\n" + string(pe.Stack)
	}
	var be *barrier.Error
	if errors.As(err, &be) {
		return internalDiag(be.Diags)
	}
	var dl diag.List
	if errors.As(err, &dl) {
		return internalDiag(dl)
	}
	return ""
}

func internalDiag(ds diag.List) string {
	for _, d := range ds {
		if d.Code == ir.DiagInternal || d.Code == syntax.CodeInternal ||
			strings.Contains(d.Msg, "panicked") || strings.HasPrefix(d.Msg, "internal") {
			return d.String()
		}
	}
	return ""
}

func toString(v any) string {
	if e, ok := v.(error); ok {
		return e.Error()
	}
	if s, ok := v.(string); ok {
		return s
	}
	return "non-string panic value"
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}
