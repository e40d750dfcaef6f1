package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
)

// TestTargetAttrEquality: a T.target function attribute takes part in
// structural equality and hashing, entry by entry (nested host included).
func TestTargetAttrEquality(t *testing.T) {
	const tmpl = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.func_attr({"target": T.target({"host": {"keys": ["cpu"], "kind": "HOST"}, "keys": ["cpu"], "kind": "KIND", "tag": ""})})
        A[0] = T.float32(1)
`
	parse := func(kind, host string) *ir.Module {
		src := strings.Replace(strings.Replace(tmpl, "KIND", kind, 1), "HOST", host, 1)
		return parseOrFail(t, "target.tvms", []byte(src))
	}
	base := parse("llvm", "llvm")
	requireSame(t, base, parse("llvm", "llvm"))

	tgt, ok := base.PrimFunc("f").Attrs["target"].(*ir.Target)
	require.True(t, ok, "target attribute is %T", base.PrimFunc("f").Attrs["target"])
	require.Equal(t, "llvm", tgt.Config["kind"])

	for _, other := range []*ir.Module{parse("c", "llvm"), parse("llvm", "c")} {
		requireDistinct(t, base, other)
	}
}

// TestLaunchThreadEquality: thread launches compare by tag, key and extent,
// and their variables alpha-rename like any definition.
func TestLaunchThreadEquality(t *testing.T) {
	const tmpl = `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        VAR = T.launch_thread("TAG", EXT)
        T.attr(0, "KEY", 1)
        A[VAR] = T.float32(1)
`
	parse := func(v, tag, ext, key string) *ir.Module {
		src := strings.NewReplacer("VAR", v, "TAG", tag, "EXT", ext, "KEY", key).Replace(tmpl)
		return parseOrFail(t, "launch.tvms", []byte(src))
	}
	base := parse("tx", "threadIdx.x", "64", "k")
	requireSame(t, base, parse("other", "threadIdx.x", "64", "k"))
	for _, other := range []*ir.Module{
		parse("tx", "blockIdx.x", "64", "k"),
		parse("tx", "threadIdx.x", "32", "k"),
		parse("tx", "threadIdx.x", "64", "j"),
	} {
		requireDistinct(t, base, other)
	}
}

// TestEvaluatedCallPrintsBare: T.evaluate(call) prints as the bare call,
// as TVM's printer writes an Evaluate of a Call; a non-call keeps
// T.evaluate, and so does a vector node (T.Broadcast is no Call in TVM).
func TestEvaluatedCallPrintsBare(t *testing.T) {
	src := `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        T.evaluate(T.call_extern("int32", "g", 2))
        T.evaluate(T.Broadcast(1, 4))
        T.evaluate(1)
        A[0] = T.float32(1.0)
`
	got := printer.Print(parseOrFail(t, "ev.tvms", []byte(src)))
	require.Contains(t, got, "\n        T.call_extern(\"int32\", \"g\", 2)\n")
	require.Contains(t, got, "\n        T.evaluate(T.Broadcast(1, 4))\n")
	require.Contains(t, got, "\n        T.evaluate(1)\n")
}

// TestEnvThreadLaunch: T.env_thread declares one thread variable that every
// T.launch_thread(x, n) launches (TVM's env_thread returns one IterVar, and
// tir::VerifyWellFormed requires one variable per thread), and the module
// prints back in that form, as TVM's printer declares a thread launched more
// than once with T.env_thread. Written with tags, the two launches define
// two variables: another module.
func TestEnvThreadLaunch(t *testing.T) {
	const head = `# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
`
	env := head + `        tx = T.env_thread("threadIdx.x")
        with T.launch_thread(tx, 64):
            A[tx] = T.float32(1.0)
        T.launch_thread(tx, 32)
        A[tx] = T.float32(2.0)
`
	tags := head + `        with T.launch_thread("threadIdx.x", 64) as tx:
            A[tx] = T.float32(1.0)
        tx = T.launch_thread("threadIdx.x", 32)
        A[tx] = T.float32(2.0)
`
	threads := func(m *ir.Module) []*ir.PrimVar {
		var vs []*ir.PrimVar
		ir.WalkStmt(m.PrimFunc("f").Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
			if a, ok := s.(*ir.AttrStmt); ok {
				vs = append(vs, a.Thread)
			}
			return true
		}})
		return vs
	}
	m1, m2 := parseOrFail(t, "env.tvms", []byte(env)), parseOrFail(t, "tags.tvms", []byte(tags))
	v1, v2 := threads(m1), threads(m2)
	require.Len(t, v1, 2)
	require.Len(t, v2, 2)
	require.Same(t, v1[0], v1[1])
	require.NotSame(t, v2[0], v2[1])
	require.NotNil(t, ir.Diff(m1, m2, ir.EqualOptions{}))
	require.Equal(t, env, printer.Print(m1))
	require.Equal(t, tags, printer.Print(m2))
}
