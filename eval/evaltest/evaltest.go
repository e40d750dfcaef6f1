// Package evaltest checks that a pipeline preserves what a module
// computes: it evaluates the module with the reference evaluator before
// and after running any pipeline prefix and compares the results with
// dtype-aware tolerances, naming the first differing output element.
package evaltest

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
)

// Options configure a check. The zero value runs "main" on seeded random
// arguments with every symbolic dimension 3.
type Options struct {
	Func string              // the function to evaluate ("main")
	Args []op.Value          // the arguments; nil: eval.RandomArgs
	Seed uint64              // for random arguments
	Dims map[string]int64    // symbolic dimensions of random arguments by name
	Dim  int64               // every other symbolic dimension (3 when 0)
	Tol  *eval.Tolerance     // nil: Float32Tol, TranscendentalTol when the module uses exp, log, tanh, ..., Float16Tol or BFloat16Tol when it stores tensors in 16 bits
	Ctx  *passes.PassContext // nil: a default context
}

// Parse parses a module, failing the test on diagnostics.
func Parse(t testing.TB, name, src string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse(name, []byte(src))
	require.Empty(t, diags, "parse %s", name)
	return mod
}

// CheckPipeline runs spec (a textual pipeline, e.g. "LegalizeOps" or
// "canonicalize,lower") on mod and checks that the result computes what
// mod computes. It returns the transformed module.
func CheckPipeline(t testing.TB, mod *ir.Module, spec string, o Options) *ir.Module {
	t.Helper()
	p, diags := barrier.Registry.ParseAndBuild("pipeline", spec)
	require.False(t, diags.HasErrors(), "pipeline %q: %v", spec, diags)
	pc := o.Ctx
	if pc == nil {
		pc = passes.NewPassContext()
	}
	out, err := pc.Run(context.Background(), p, mod)
	require.NoError(t, err, "pipeline %q", spec)
	CheckSame(t, mod, out, o)
	return out
}

// CheckSame evaluates o.Func of before and after on the same arguments
// and compares the results.
func CheckSame(t testing.TB, before, after *ir.Module, o Options) {
	t.Helper()
	name := o.Func
	if name == "" {
		name = "main"
	}
	args := o.Args
	if args == nil {
		fn := before.Func(name)
		require.NotNil(t, fn, "no function %s", name)
		dim := o.Dim
		if dim == 0 {
			dim = 3
		}
		var err error
		args, err = eval.RandomArgs(fn, o.Seed, o.Dims, dim)
		require.NoError(t, err, "random arguments")
	}
	want, err := eval.New(before).Call(name, args...)
	require.NoError(t, err, "evaluating the input module")
	got, err := eval.New(after).Call(name, convertArgs(after.Func(name), args)...)
	require.NoError(t, err, "evaluating the transformed module\n%s", printed{after})
	tol := eval.Float32Tol
	half, isHalf := eval.HalfPrecisionTol(after)
	switch {
	case o.Tol != nil:
		tol = *o.Tol
	case isHalf:
		tol = half
	case eval.UsesTranscendental(before) || eval.UsesTranscendental(after):
		tol = eval.TranscendentalTol
	}
	require.NoError(t, eval.Compare(got, want, tol), "the transformed module computes something else\n%s", printed{after})
}

// convertArgs rounds each float tensor argument to the dtype fn's
// parameter takes when a pass changed it (ToMixedPrecision's
// fp16_input_names): the transformed function gets the same values, as
// its callers would pass them.
func convertArgs(fn *ir.Function, args []op.Value) []op.Value {
	if fn == nil || len(fn.Params) != len(args) {
		return args
	}
	out, copied := args, false
	for i, p := range fn.Params {
		pt, ok := p.StructInfo().(*ir.TensorInfo)
		a, isTensor := args[i].(*tensor.Tensor)
		if !ok || !isTensor || !pt.DType.IsFloat() || op.IRDType(a.DType) == pt.DType {
			continue
		}
		dt, err := op.TensorDType(pt.DType)
		if err != nil || !a.DType.IsFloat() {
			continue
		}
		c := tensor.New(dt, a.Shape...)
		for k := range int(a.NumElements()) {
			c.SetFloat64(k, a.Float64At(k))
		}
		if !copied {
			out, copied = slices.Clone(args), true
		}
		out[i] = c
	}
	return out
}

// printed prints its module only when a failure message is formatted
// (testify formats msgAndArgs on failure only): a passing check does not
// pay for printer.Print.
type printed struct{ mod *ir.Module }

func (p printed) String() string { return printer.Print(p.mod) }

// elements counts the tensor elements of a value.
func elements(v op.Value) int64 {
	switch x := v.(type) {
	case op.Tuple:
		n := int64(0)
		for _, e := range x {
			n += elements(e)
		}
		return n
	case interface{ NumElements() int64 }:
		return x.NumElements()
	}
	return 0
}
