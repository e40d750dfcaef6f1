package irgen

import (
	"fmt"
	"strings"
)

// ChainSource returns TVMScript text of a module whose main function has n
// bindings (n >= 1) in one dataflow block: a chain cycling through R.add,
// an annotated R.multiply and R.nn.relu over R.Tensor((n, 16), "float32"),
// then gv. It is the shape of the parser benchmark's module (about 54 bytes
// per binding, so 1M bindings is ~55 MB) for benchmarks of whole commands.
func ChainSource(n int) string {
	var b strings.Builder
	b.Grow(56 * (n + 10))
	b.WriteString("# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n")
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n")
	b.WriteString("    def main(x: R.Tensor((\"n\", 16), dtype=\"float32\"), y: R.Tensor((\"n\", 16), dtype=\"float32\")) -> R.Tensor((\"n\", 16), dtype=\"float32\"):\n")
	b.WriteString("        n = T.int64()\n        with R.dataflow():\n            lv0 = R.add(x, y)\n")
	for i := 1; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "            lv%d = R.add(lv%d, x)\n", i, i-1)
		case 1:
			fmt.Fprintf(&b, "            lv%d: R.Tensor((n, 16), dtype=\"float32\") = R.multiply(lv%d, y)\n", i, i-1)
		default:
			fmt.Fprintf(&b, "            lv%d = R.nn.relu(lv%d)\n", i, i-1)
		}
	}
	fmt.Fprintf(&b, "            gv = R.add(lv%d, x)\n            R.output(gv)\n        return gv\n", n-1)
	return b.String()
}
