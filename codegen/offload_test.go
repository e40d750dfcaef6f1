package codegen_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

// runPipeline parses path and runs a textual pipeline on it.
func runPipeline(t *testing.T, path, pipeline string) (in, out *ir.Module, err error) {
	src, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	in, diags := syntax.Parse(path, src)
	require.False(t, diags.HasErrors(), "%v", diags)
	p, perrs := barrier.Registry.ParseAndBuild("pipeline", pipeline)
	require.Nil(t, perrs)
	out, err = passes.NewPassContext().Run(context.Background(), p, in)
	return in, out, err
}

// offloadPipelines take a model through pattern-based offload to the
// phasec_blas codegen, in TVM's forms: composite functions merged per
// codegen, and each composite annotated on its own.
var offloadPipelines = []string{
	`canonicalize,FuseOpsByPattern{patterns=["phasec_blas"]},MergeCompositeFunctions,RunCodegen,lower,build`,
	`canonicalize,FuseOpsByPattern{patterns=["phasec_blas"],annotate_codegen=true},RunCodegen,lower,build`,
	`canonicalize,FuseOpsByPattern{patterns=["phasec_blas"],bind_constants=false},MergeCompositeFunctions,RunCodegen,optimize,lower,build`,
}

// TestOffloadAgreesWithEvaluator: models whose matmuls are offloaded to the
// phasec_blas external codegen compute on the VM (through the executable's
// external module, marshalled and loaded) what the reference evaluator
// computes from their source, on random inputs at several symbolic sizes.
func TestOffloadAgreesWithEvaluator(t *testing.T) {
	for _, path := range []string{"../testdata/models/mlp.tvms", "../testdata/passes/RunCodegen/linear_variants.tvms", "../testdata/models/transformer_block_hl.tvms"} {
		for _, pipeline := range offloadPipelines {
			input, output, err := runPipeline(t, path, pipeline)
			require.NoError(t, err, "%s: %s", path, pipeline)
			ext, err := codegen.ExternalModules(output)
			require.NoError(t, err)
			require.Len(t, ext, 1, "%s: one phasec_blas module", path)
			assert.NotEmpty(t, ext[0].Symbols)

			exe, diags := codegen.Build(output)
			require.Empty(t, diags, path)
			require.Len(t, exe.External, 1)
			assert.Contains(t, exe.Text(), "external modules (1):")
			machine, err := loader.Load(exe.Marshal(), vm.Options{})
			require.NoError(t, err, path)

			main := input.Func("main")
			for seed, size := range []int64{1, 3, 8} {
				in, err := eval.RandomArgs(main, uint64(seed), nil, size)
				require.NoError(t, err)
				want, err := eval.New(input).Call("main", in...)
				require.NoError(t, err, "%s: evaluator", path)
				args := make([]vm.Value, len(in))
				for i, a := range in {
					args[i], err = codegen.ToVM(a)
					require.NoError(t, err)
				}
				out, _, err := machine.Call(context.Background(), "main", args)
				require.NoError(t, err, "%s: VM, symbolic size %d", path, size)
				got, err := codegen.FromVM(out, want)
				require.NoError(t, err)
				require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "%s: %s, symbolic size %d", path, pipeline, size)
			}
		}
	}
}

// TestOffloadedCodegenFunctionReachingLower: a Codegen function (with its
// nested composite) left for the lower barrier is refused before any IR is
// touched, with the missing step named.
func TestOffloadedCodegenFunctionReachingLower(t *testing.T) {
	_, _, err := runPipeline(t, "../testdata/models/mlp.tvms", `canonicalize,FuseOpsByPattern{patterns=["phasec_blas"]},MergeCompositeFunctions,lower,build`)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "CHK001")
	assert.Contains(t, msg, "missing {NoNestedFunctions")
	assert.True(t, strings.Contains(msg, "RunCodegen"), "the hint names RunCodegen: %s", msg)
}

// TestExternalModulesAttrMalformed: a hand-written external_mods attribute
// that is not RunCodegen's form is an error naming the record.
func TestExternalModulesAttrMalformed(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{"x", "must be a list"},
		{[]any{"x"}, "external_mods[0] must be a map"},
		{[]any{ir.Attrs{"kind": "k", "payload": "p"}}, "external_mods[0] needs a string kind, a string payload and a list of symbols"},
		{[]any{ir.Attrs{"kind": "k", "payload": "p", "symbols": []any{int64(1)}}}, "symbol 1 is not a string"},
	} {
		mod := ir.NewModule()
		mod.Attrs = ir.Attrs{ir.AttrExternalMods: c.v}
		_, err := codegen.ExternalModules(mod)
		assert.ErrorContains(t, err, c.want)
	}
}

const mlp512 = `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("batch", 784), dtype="float32"), w0: R.Tensor((784, 512), dtype="float32"), b0: R.Tensor((512,), dtype="float32"), w1: R.Tensor((512, 512), dtype="float32"), b1: R.Tensor((512,), dtype="float32"), w2: R.Tensor((512, 10), dtype="float32"), b2: R.Tensor((10,), dtype="float32")) -> R.Tensor(("batch", 10), dtype="float32"):
        batch = T.int64()
        with R.dataflow():
            lv = R.matmul(x, w0)
            lv1 = R.add(lv, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, w1)
            lv4 = R.add(lv3, b1)
            lv5 = R.nn.relu(lv4)
            lv6 = R.matmul(lv5, w2)
            lv7 = R.add(lv6, b2)
            gv = R.nn.softmax(lv7, axis=-1)
            R.output(gv)
        return gv
`

// BenchmarkOffloadMLP compares a 784-512-512-10 MLP at batch 64 and the
// demo MLP at batch 4 compiled by phasec's own lowering and with their
// matmuls offloaded to the phasec_blas codegen (run the two side by side,
// -count several, and compare ratios).
func BenchmarkOffloadMLP(b *testing.B) {
	demo, err := os.ReadFile("../testdata/models/mlp.tvms")
	require.NoError(b, err)
	for _, model := range []struct {
		name  string
		src   string
		batch int64
	}{{"mlp784-512-512-10/batch=64", mlp512, 64}, {"demo_mlp/batch=4", string(demo), 4}} {
		for _, variant := range []struct{ name, pipeline string }{
			{"lowered", "canonicalize,optimize,lower,build"},
			{"offloaded", offloadPipelines[0]},
		} {
			b.Run(model.name+"/"+variant.name, func(b *testing.B) {
				mod, diags := syntax.Parse("bench.tvms", []byte(model.src))
				require.False(b, diags.HasErrors(), "%v", diags)
				p, perrs := barrier.Registry.ParseAndBuild("pipeline", variant.pipeline)
				require.Nil(b, perrs)
				out, err := passes.NewPassContext().Run(context.Background(), p, mod)
				require.NoError(b, err)
				exe, ds := codegen.Build(out)
				require.Empty(b, ds)
				machine, err := loader.Link(exe, vm.Options{})
				require.NoError(b, err)
				in, err := eval.RandomArgs(mod.Func("main"), 1, nil, model.batch)
				require.NoError(b, err)
				args := make([]vm.Value, len(in))
				for i, a := range in {
					args[i], err = codegen.ToVM(a)
					require.NoError(b, err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, _, err := machine.Call(context.Background(), "main", args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
