package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

// TestAlterOpImplGoldensRunOnTheVM builds every AlterOpImpl golden input
// through its pipeline, then optimize (which legalizes the inserted
// layout_transform calls), lower and build, and runs it on the VM against
// the evaluator on the input: the replacement kernels and the layout
// transforms around them (with remove_pad after a padding split) compute
// what the original kernel did.
func TestAlterOpImplGoldensRunOnTheVM(t *testing.T) {
	ran := 0
	for dir, pipeline := range goldens {
		if !strings.HasPrefix(dir, "AlterOpImpl") {
			continue
		}
		inputs, err := passtest.Inputs("../testdata/passes/" + dir)
		require.NoError(t, err)
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if strings.Contains(string(src), "# want") {
				continue
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				mod := evaltest.Parse(t, path, string(src))
				built, err := runPipeline(t, "canonicalize,"+pipeline+",optimize,lower,build", mod)
				require.NoError(t, err)
				for _, name := range mod.Names() {
					f := mod.Func(name)
					if f == nil || !ir.IsPublic(f) {
						continue
					}
					args, err := eval.RandomArgs(f, 11, nil, 4)
					require.NoError(t, err)
					want, err := semcheck.Evaluate(mod, name, args, nil)
					require.NoError(t, err)
					got, err := semcheck.Evaluate(built, name, args, want)
					require.NoError(t, err, name)
					require.NoError(t, eval.Compare(got, want, eval.Tolerance{}), name)
					ran++
				}
			})
		}
	}
	assert.GreaterOrEqual(t, ran, 7, "too few AlterOpImpl goldens ran on the VM")
}

// A bad index map or separator list is refused when the pipeline is
// built, at the pass, naming the operator, the buffer and the column.
func TestAlterOpImplBadOptions(t *testing.T) {
	requireBadPipelines(t, map[string]string{
		`AlterOpImpl{op_buffer_transforms={"relax.add":["lambda i: (i // 4, i %% 4)"]}}`: `PIPE\d+.*op_buffer_transforms\["relax.add"\]\[0\]: index map .*column 23: syntax error`,
		`AlterOpImpl{op_buffer_transforms={"relax.add":["lambda i: (j,)"]}}`:             `op_buffer_transforms\["relax.add"\]\[0\]: index map .*column \d+: .*\bj\b`,
		`AlterOpImpl{op_buffer_transforms={"relax.add":[3]}}`:                            `op_buffer_transforms\["relax.add"\]\[0\] must be an index map`,
		`AlterOpImpl{op_buffer_axis_separators={"relax.add":[["a"]]}}`:                   `op_buffer_axis_separators\["relax.add"\]\[0\] must be a list of non-negative integers`,
		`AlterOpImpl{op_impl_map={"relax.add":3}}`:                                       `op_impl_map\["relax.add"\] must be the name of a PrimFunc`,
	})
	// Cross-option rules are checked when the pass runs, at the module.
	mod := parseFile(t, "../testdata/passes/AlterOpImpl/single_output.tvms")
	for spec, re := range map[string]string{
		`AlterOpImpl{op_impl_map={"relax.add":"add_2d"}}`:                                                                                                                                                                               `no file holds them`,
		`AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_buffer_transforms={"relax.add":[]}}`:                                                                                                                       `operator "relax.add" has buffer layouts but no replacement`,
		`AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/nope.tvms",op_impl_map={"relax.add":"add_2d"}}`:                                                                                                                         `OPT701.*cannot read the replacement file`,
		`AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add_2d"},op_buffer_transforms={"relax.add":["lambda i: (i // 4, i % 4)"]}}`:                                                         `OPT703.*op_buffer_transforms\["relax.add"\] has 1 entries, replacement add_2d has 3 buffers`,
		`AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add_x_x"}}`:                                                                                                                         `OPT703.*replacement add_x_x of relax.add has 2 parameters, the kernel add it replaces has 3`,
		`AlterOpImpl{file="../testdata/passes/AlterOpImpl/impls/add.tvms",op_impl_map={"relax.add":"add_2d"},op_buffer_transforms={"relax.add":["lambda i: (i // 2, i % 2)","lambda i: (i // 2, i % 2)","lambda i: (i // 2, i % 2)"]}}`: `OPT703.*buffer arg0 of replacement add_2d has shape \(4, 4\), the call of add gives it a tensor of shape \(8, 2\)`,
	} {
		_, err := runPipeline(t, spec, mod)
		require.Error(t, err, spec)
		assert.Regexp(t, re, err.Error(), spec)
	}
}

func TestParseIndexMap(t *testing.T) {
	for text, want := range map[string]string{
		"lambda i: (i // 4, i % 4)":                    "T.index_map(lambda i: (i // 4, i % 4))",
		"T.index_map(lambda n, c, h, w: (n, h, w, c))": "T.index_map(lambda n, c, h, w: (n, h, w, c))",
		"lambda i: i % 16":                             "T.index_map(lambda i: (i % 16,))",
	} {
		m, err := transform.ParseIndexMap(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, m.String())
	}
	for text, re := range map[string]string{
		"lambda i: (i //, 4)": `column 16`,
		"lambda i:\n (i,)":    `spans lines`,
		"(1, 2)":              `index_map must be an index map`,
	} {
		_, err := transform.ParseIndexMap(text)
		require.Error(t, err, text)
		assert.Regexp(t, re, err.Error(), text)
	}
}

// alterOpChain is a module of n calls of one relax.add kernel in a chain.
func alterOpChain(n int) *ir.Module {
	var b strings.Builder
	b.WriteString(`@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(arg0: T.Buffer((16,), "float32"), arg1: T.Buffer((16,), "float32"), output: T.Buffer((16,), "float32")):
        T.func_attr({"operator_name": "relax.add"})
        for ax0 in range(16):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(16, ax0)
                output[v_ax0] = arg0[v_ax0] + arg1[v_ax0]

    @R.function
    def main(x: R.Tensor((16,), dtype="float32")) -> R.Tensor((16,), dtype="float32"):
        with R.dataflow():
            lv0 = x
`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "            lv%d = R.call_tir(Module.add, (lv%d, x), out_sinfo=R.Tensor((16,), dtype=\"float32\"))\n", i, i-1)
	}
	fmt.Fprintf(&b, "            gv = lv%d\n            R.output(gv)\n        return gv\n", n)
	mod, errs := syntax.Parse("chain.tvms", []byte(b.String()))
	if len(errs) > 0 {
		panic(errs)
	}
	out, errs := ir.NormalizeModule(mod)
	if len(errs) > 0 {
		panic(errs)
	}
	return out
}
