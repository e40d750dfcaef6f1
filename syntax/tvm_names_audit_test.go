package syntax

import (
	"fmt"
	"github.com/phasec/phasec/syntax/printer"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The name audit: every R.* name TVM v0.23's parser resolves (tvm_names.go,
// from its signature table) is called with one argument per parameter of
// its signature, positionally, from a function with tensors, shapes and
// prim values in scope. TVM accepts such a call's form, so phasec must
// resolve the name and accept the arity: "unknown operator", "takes at
// most", "unknown keyword" or "not supported" fail the test. A call that
// parses must print back and parse again to the same text. Argument values
// are generic, so an op may still reject their types (logged, counted):
// that is its inference speaking, not the name audit.

// auditSkip are builder-API names with no call form inside a function body,
// each covered by its own statement form elsewhere.
var auditSkip = map[string]string{
	"R.function": "decorator", "R.dataflow": "with statement", "R.output": "dataflow statement",
	"R.arg": "IRBuilder API", "R.func_name": "IRBuilder API", "R.func_attr": "statement",
	"R.func_ret_struct_info": "IRBuilder API", "R.func_ret_value": "IRBuilder API",
	"R.If": "IRBuilder API", "R.Then": "IRBuilder API", "R.Else": "IRBuilder API", "R.SeqExpr": "IRBuilder API",
	"R.emit": "IRBuilder API", "R.emit_te": "needs a Python TE function", "R.emit_match_cast": "IRBuilder API",
	"R.emit_var_binding": "IRBuilder API", "R.register_gradient": "Python registration",
	"R.rewriter": "decorator", "R.match_cast": "binding form (tested in tvm_forms)",
}

// auditKeywordOnly are parameters after a bare * in TVM's signature
// (tvm_names.go drops the marker): passed by keyword.
var auditKeywordOnly = map[string]string{"R.call_builtin_with_ctx": "sinfo_args"}

// auditKnownGaps are call forms TVM accepts that phasec still rejects, with
// the reason; the test checks they still fail, so a fix must remove them.
var auditKnownGaps = map[string]string{}

// auditArg is a generic value for a parameter, by its name.
func auditArg(param string) string {
	switch param {
	case "shape", "new_shape", "shape_tuple", "size", "output_size":
		return "R.shape([2, 3])"
	case "dtype", "out_dtype":
		return `"float32"`
	case "indices", "index", "indices_or_sections":
		return "i"
	case "condition", "cond":
		return "b"
	case "tensors", "args", "format_args":
		return "(x, x)"
	case "axis", "axes", "num_workers", "k", "exclusive", "keepdims", "descending":
		return "0"
	case "func", "gvar", "func_name", "py_func_name", "global_symbol", "format_str", "format", "name", "op_name", "te_grad_name":
		return `"f"`
	case "out_sinfo", "sinfo_args", "struct_info", "ret_sinfo", "annotate_struct_info":
		return `R.Tensor((2, 3), dtype="float32")`
	}
	return "x"
}

var resolutionFailure = regexp.MustCompile(`unknown operator|takes at most|unknown keyword|not supported|unknown struct info`)

func TestTVMRelaxNameAudit(t *testing.T) {
	paths := make([]string, 0, len(tvmRelaxSignatures))
	for p := range tvmRelaxSignatures {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var parsed, typeErrors, skipped int
	for _, path := range paths {
		if _, ok := auditSkip[path]; ok {
			skipped++
			continue
		}
		var args []string
		for _, p := range tvmRelaxSignatures[path] {
			switch {
			case strings.HasPrefix(p, "*"):
				continue
			case auditKeywordOnly[path] == p:
				args = append(args, p+"="+auditArg(p))
			default:
				args = append(args, auditArg(p))
			}
		}
		src := fmt.Sprintf(`# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), dtype="float32"), i: R.Tensor((2, 3), dtype="int64"), b: R.Tensor((2, 3), dtype="bool")) -> R.Object:
        y: R.Object = %s(%s)
        return y
`, path, strings.Join(args, ", "))
		mod, diags := Parse(path+".tvms", []byte(src))
		if gap, known := auditKnownGaps[path]; known {
			assert.True(t, diags.HasErrors(), "%s parses now: remove it from auditKnownGaps (%s)", path, gap)
			skipped++
			continue
		}
		if diags.HasErrors() {
			msg := FormatDiagnostics(diags, []byte(src))
			if resolutionFailure.MatchString(msg) {
				assert.Failf(t, "TVM resolves this call form, phasec does not", "%s:\n%s", path, msg)
			} else {
				typeErrors++
				t.Logf("%s: arguments rejected by inference (generic values): %s", path, firstLine(msg))
			}
			continue
		}
		parsed++
		text := printer.Print(mod)
		mod2, diags := Parse(path+" (printed)", []byte(text))
		if diags.HasErrors() {
			assert.Failf(t, "printed call does not parse", "%s:\n%s\n%s", path, FormatDiagnostics(diags, []byte(text)), text)
			continue
		}
		if text2 := printer.Print(mod2); text2 != text {
			assert.Failf(t, "printing is not idempotent", "%s:\n%s", path, firstLineDiff(text, text2))
		}
	}
	t.Logf("%d names: %d parse and round-trip, %d rejected by inference on generic arguments, %d skipped (builder API, known gaps)",
		len(paths), parsed, typeErrors, skipped)
	assert.GreaterOrEqual(t, parsed, len(paths)/2, "names of %d that parse with generic arguments", len(paths))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
