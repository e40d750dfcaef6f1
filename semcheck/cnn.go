package semcheck

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/phasec/phasec/ir/randmod"
)

// GenerateCNN returns a random float32 convolutional network in NCHW, the
// model family of the differential test that exercises the
// layout-sensitive ops and the passes rewriting them (ConvertLayout,
// FoldBatchnormToConv2D, ToMixedPrecision): main(x, weights...) over a
// static input of 1 or 2 images, a stack of 2 to 6 layers drawn from
//
//	R.nn.conv2d      random kernel (1..3), strides (1..2), padding (0..2),
//	                 dilation (1..2), groups dividing both channel counts
//	R.nn.max_pool2d, R.nn.avg_pool2d   pool 1..3, strides 1..2, padding < pool
//	R.nn.batch_norm  inference form, moving statistics as parameters ([0])
//	R.nn.layer_norm  over (C, H, W)
//	R.nn.relu
//	R.add            a residual add of an earlier value of the same shape
//
// in a dataflow block. Shapes are tracked, so every module type-checks; the
// same seed gives the same module. The result's Ops counts the op calls.
func GenerateCNN(seed uint64) *randmod.Module {
	g := &cnnGen{rng: rand.New(rand.NewPCG(seed, 0xc0ffee)), ops: map[string]int{}}
	return g.generate()
}

type cnnShape struct{ n, c, h, w int }

func (s cnnShape) String() string { return fmt.Sprintf("(%d, %d, %d, %d)", s.n, s.c, s.h, s.w) }

type cnnValue struct {
	name  string
	shape cnnShape
}

type cnnGen struct {
	rng    *rand.Rand
	ops    map[string]int
	params []string
	lines  []string
	vals   []cnnValue
	next   int
}

func (g *cnnGen) fresh(prefix string) string {
	g.next++
	return fmt.Sprintf("%s%d", prefix, g.next)
}

func (g *cnnGen) param(prefix, shape string) string {
	name := g.fresh(prefix)
	g.params = append(g.params, fmt.Sprintf("%s: R.Tensor(%s, dtype=\"float32\")", name, shape))
	return name
}

func (g *cnnGen) emit(op string, shape cnnShape, format string, args ...any) cnnValue {
	v := cnnValue{g.fresh("lv"), shape}
	g.lines = append(g.lines, fmt.Sprintf("            %s: R.Tensor(%s, dtype=\"float32\") = %s", v.name, shape, fmt.Sprintf(format, args...)))
	g.ops[op]++
	g.vals = append(g.vals, v)
	return v
}

func (g *cnnGen) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *cnnGen) generate() *randmod.Module {
	in := cnnShape{n: g.between(1, 2), c: g.between(1, 4), h: g.between(5, 9), w: g.between(5, 9)}
	g.params = append(g.params, fmt.Sprintf("x: R.Tensor(%s, dtype=\"float32\")", in))
	cur := cnnValue{"x", in}
	g.vals = append(g.vals, cur)
	layers := g.between(2, 6)
	for range layers {
		if next, ok := g.layer(cur); ok {
			cur = next
		}
	}
	if cur.name == "x" {
		cur = g.emit("R.nn.relu", cur.shape, "R.nn.relu(x)")
	}
	var b strings.Builder
	b.WriteString("# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n    @R.function\n")
	fmt.Fprintf(&b, "    def main(%s) -> R.Tensor(%s, dtype=\"float32\"):\n        with R.dataflow():\n", strings.Join(g.params, ", "), cur.shape)
	for _, l := range g.lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "            gv: R.Tensor(%s, dtype=\"float32\") = %s\n            R.output(gv)\n        return gv\n", cur.shape, cur.name)
	return &randmod.Module{Text: b.String(), Ops: g.ops, DType: "float32", Dataflow: true}
}

// layer emits one layer on cur; false when the drawn layer does not fit
// (an image too small for the kernel).
func (g *cnnGen) layer(cur cnnValue) (cnnValue, bool) {
	s := cur.shape
	switch g.rng.IntN(7) {
	case 0, 1:
		return g.conv(cur)
	case 2:
		k := g.between(1, 3)
		stride, pad := g.between(1, 2), g.rng.IntN(k)
		pad = min(pad, k/2)
		if s.h+2*pad < k || s.w+2*pad < k {
			return cur, false
		}
		oh, ow := (s.h+2*pad-k)/stride+1, (s.w+2*pad-k)/stride+1
		if oh < 1 || ow < 1 {
			return cur, false
		}
		op := "R.nn.max_pool2d"
		if g.rng.IntN(2) == 0 {
			op = "R.nn.avg_pool2d"
		}
		return g.emit(op, cnnShape{s.n, s.c, oh, ow}, "%s(%s, pool_size=[%d, %d], strides=[%d, %d], padding=[%d, %d])", op, cur.name, k, k, stride, stride, pad, pad), true
	case 3:
		c := fmt.Sprintf("(%d,)", s.c)
		gamma, beta, mean, vr := g.param("gamma", c), g.param("beta", c), g.param("mean", c), g.param("var", c)
		bn := g.fresh("bn")
		g.lines = append(g.lines, fmt.Sprintf("            %s = R.nn.batch_norm(%s, %s, %s, %s, R.abs(%s), axis=1, epsilon=0.1)", bn, cur.name, gamma, beta, mean, vr))
		g.ops["R.abs"]++
		return g.emit("R.nn.batch_norm", s, "%s[0]", bn), true
	case 4:
		shape := fmt.Sprintf("(%d, %d, %d)", s.c, s.h, s.w)
		gamma, beta := g.param("ln_g", shape), g.param("ln_b", shape)
		return g.emit("R.nn.layer_norm", s, "R.nn.layer_norm(%s, %s, %s, axes=[1, 2, 3], epsilon=1e-05)", cur.name, gamma, beta), true
	case 5:
		return g.emit("R.nn.relu", s, "R.nn.relu(%s)", cur.name), true
	default:
		// A residual add of an earlier value of the same shape.
		for i := len(g.vals) - 2; i >= 0; i-- {
			if g.vals[i].shape == s {
				return g.emit("R.add", s, "R.add(%s, %s)", cur.name, g.vals[i].name), true
			}
		}
		return cur, false
	}
}

// conv emits a conv2d with random kernel, strides, padding, dilation and
// groups (dividing the input and output channels).
func (g *cnnGen) conv(cur cnnValue) (cnnValue, bool) {
	s := cur.shape
	k, stride, pad, dil := g.between(1, 3), g.between(1, 2), g.between(0, 2), g.between(1, 2)
	var groups []int
	for d := 1; d <= s.c; d++ {
		if s.c%d == 0 {
			groups = append(groups, d)
		}
	}
	grp := groups[g.rng.IntN(len(groups))]
	oc := grp * g.between(1, 3)
	span := dil*(k-1) + 1
	if s.h+2*pad < span || s.w+2*pad < span {
		return cur, false
	}
	oh, ow := (s.h+2*pad-span)/stride+1, (s.w+2*pad-span)/stride+1
	if oh < 1 || ow < 1 || oh > 12 || ow > 12 {
		return cur, false
	}
	w := g.param("w", fmt.Sprintf("(%d, %d, %d, %d)", oc, s.c/grp, k, k))
	return g.emit("R.nn.conv2d", cnnShape{s.n, oc, oh, ow}, "R.nn.conv2d(%s, %s, strides=[%d, %d], padding=[%d, %d], dilation=[%d, %d], groups=%d)",
		cur.name, w, stride, stride, pad, pad, dil, dil, grp), true
}
