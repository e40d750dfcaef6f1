//go:build ignore

// gen_math writes math_amd64.s, the AVX2/FMA vector math behind math.go.
// Run `go generate ./vm/blas` after editing; the output is committed so
// builds need no generator. Every function body mirrors, operation for
// operation, the portable float32 code in math.go (same constants, same
// polynomials in the same Horner order, same range reduction); the two
// differ only where math.go's FMA rounds twice (through float64).
package main

import (
	"bytes"
	"fmt"
	"log"
	"math"
	"os"
	"regexp"
	"strings"
)

// Coefficients, shared with math.go by value (math_test.go checks that the
// tables agree).
var (
	expPoly = []float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}
	logPoly = []float32{7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1}
	// exp(r) = 1 + r*Q(r) on [-ln2/2, ln2/2], Q of degree 4 (highest
	// first): the softmax rows' cheaper exponential (expSoftmaxMaxULP),
	// fitted for relative error (iteratively reweighted least squares,
	// max 9.7e-8 before rounding the coefficients).
	expQPoly = []float32{0.008289427743076554, 0.041902572012327, 0.16667675897568113, 0.49999115103845915, 0.999999689076571}
	tanhPoly = []float32{-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1}
	// erf(z)/z in z² on [0, 1] and erf(z) in z-2.5 on [1, 4], highest
	// degree first (Chebyshev interpolation, see math.go).
	erfSmall = []float32{-0.000564806, 0.004921762, -0.026715055, 0.11280317, -0.37612343, 1.1283791}
	erfLarge = []float32{-9.210143e-06, 2.1517164e-05, 6.279154e-05, -0.00028156303, 0.00028345632, 0.00057576713, -0.0028137984, 0.0060984734, -0.008618021, 0.008354954, -0.005446062, 0.0021779074, 0.999593}
)

type gen struct {
	w      bytes.Buffer
	consts map[string]uint32
	order  []string
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.w, "\t"+format+"\n", args...) }

// k returns the memory operand of a 32-byte constant holding bits in
// every lane.
func (g *gen) k(name string, bits uint32) string {
	if old, ok := g.consts[name]; ok {
		if old != bits {
			log.Fatalf("constant %s redefined", name)
		}
	} else {
		g.consts[name] = bits
		g.order = append(g.order, name)
	}
	return name + "<>(SB)"
}

func (g *gen) f(name string, v float32) string { return g.k(name, math.Float32bits(v)) }

// horner leaves c[0]*t^(n-1) + ... + c[n-1] in acc.
func (g *gen) horner(acc, t, prefix string, c []float32) {
	g.p("VMOVUPS %s, %s", g.f(fmt.Sprintf("%s%d", prefix, 0), c[0]), acc)
	for i := 1; i < len(c); i++ {
		g.p("VFMADD213PS %s, %s, %s", g.f(fmt.Sprintf("%s%d", prefix, i), c[i]), t, acc)
	}
}

// exp computes exp(x) in place; t1..t4 are clobbered.
func (g *gen) exp(x, t1, t2, t3, t4 string) {
	g.p("VMOVUPS %s, %s", g.f("expHi", 89), t1)
	g.p("VMINPS %s, %s, %s", x, t1, x) // hi < x ? hi : x (NaN stays)
	g.p("VMOVUPS %s, %s", g.f("expLo", -104), t1)
	g.p("VMAXPS %s, %s, %s", x, t1, x)
	g.p("VMULPS %s, %s, %s", g.f("log2e", float32(math.Log2E)), x, t1)
	g.p("VCVTPS2DQ %s, %s", t1, t2) // n, rounded to nearest even
	g.p("VCVTDQ2PS %s, %s", t2, t1)
	g.p("VFNMADD231PS %s, %s, %s", g.f("ln2Hi", 0.693359375), t1, x)
	g.p("VFNMADD231PS %s, %s, %s", g.f("ln2Lo", -2.12194440e-4), t1, x)
	g.horner(t3, x, "expP", expPoly)
	g.p("VMULPS %s, %s, %s", x, x, t4)
	g.p("VFMADD213PS %s, %s, %s", x, t4, t3) // p*r² + r
	g.p("VADDPS %s, %s, %s", g.f("one", 1), t3, t3)
	// 2^n as 2^(n>>1) * 2^(n-(n>>1)): both factors normal for n in [-150, 128].
	g.p("VPSRAD $1, %s, %s", t2, t1)
	g.p("VPSUBD %s, %s, %s", t1, t2, t2)
	g.p("VPADDD %s, %s, %s", g.k("bias127", 127), t1, t1)
	g.p("VPSLLD $23, %s, %s", t1, t1)
	g.p("VPADDD %s, %s, %s", g.k("bias127", 127), t2, t2)
	g.p("VPSLLD $23, %s, %s", t2, t2)
	g.p("VMULPS %s, %s, %s", t1, t3, t3)
	g.p("VMULPS %s, %s, %s", t2, t3, x)
}

// erf computes erf(x) in place; t1..t7 are clobbered.
func (g *gen) erf(x, t1, t2, t3, t4, t5, t6, t7 string) {
	g.p("VANDPS %s, %s, %s", g.k("absMask", 0x7fffffff), x, t1)
	g.p("VANDPS %s, %s, %s", g.k("signMask", 0x80000000), x, t5)
	g.p("VMOVUPS %s, %s", g.f("four", 4), t2)
	g.p("VMINPS %s, %s, %s", t1, t2, t2) // min(z, 4), NaN stays
	g.p("VSUBPS %s, %s, %s", g.f("twoHalf", 2.5), t2, t2)
	g.horner(t3, t2, "erfL", erfLarge)
	g.p("VMOVUPS %s, %s", g.f("one", 1), t4)
	g.p("VMINPS %s, %s, %s", t3, t4, t3) // min(p, 1), NaN stays
	g.p("VMULPS %s, %s, %s", t1, t1, t4)
	g.horner(t6, t4, "erfS", erfSmall)
	g.p("VMULPS %s, %s, %s", t1, t6, t6)
	g.p("VCMPPS $1, %s, %s, %s", g.f("one", 1), t1, t7) // z < 1
	g.p("VBLENDVPS %s, %s, %s, %s", t7, t6, t3, x)
	g.p("VORPS %s, %s, %s", t5, x, x)
}

// sigmoid computes 1/(1+exp(-x)) in place as s = 1/(1+e), e = exp(-|x|),
// taking e*s for negative x; t1..t6 are clobbered.
func (g *gen) sigmoid(x, t1, t2, t3, t4, t5, t6 string) {
	g.p("VMOVAPS %s, %s", x, t6)
	g.p("VORPS %s, %s, %s", g.k("signMask", 0x80000000), x, x) // -|x|
	g.exp(x, t1, t2, t3, t4)
	g.p("VADDPS %s, %s, %s", g.f("one", 1), x, t1)
	g.p("VMOVUPS %s, %s", g.f("one", 1), t2)
	g.p("VDIVPS %s, %s, %s", t1, t2, t3) // s
	g.p("VMULPS %s, %s, %s", t3, x, t4)  // e*s
	g.p("VBLENDVPS %s, %s, %s, %s", t6, t4, t3, x)
}

type fn struct {
	name string
	body func(g *gen) // input in Y0, result in Y0
}

var fns = []fn{
	{"expF32AVX2", func(g *gen) { g.exp("Y0", "Y1", "Y2", "Y3", "Y4") }},
	{"logF32AVX2", func(g *gen) {
		g.p("VMOVAPS Y0, Y5")
		g.p("VCMPPS $1, %s, Y0, Y6", g.k("fltMin", 0x00800000)) // subnormal (or <= 0)
		g.p("VMULPS %s, Y0, Y7", g.f("two23", 1<<23))
		g.p("VBLENDVPS Y6, Y7, Y0, Y0")
		g.p("VANDPS %s, Y6, Y6", g.f("c23", 23))
		g.p("VPSRLD $23, Y0, Y1")
		g.p("VPSUBD %s, Y1, Y1", g.k("bias126", 126))
		g.p("VCVTDQ2PS Y1, Y1")
		g.p("VSUBPS Y6, Y1, Y1") // e
		g.p("VANDPS %s, Y0, Y0", g.k("mantMask", 0x807fffff))
		g.p("VORPS %s, Y0, Y0", g.f("half", 0.5)) // m in [0.5, 1)
		g.p("VCMPPS $1, %s, Y0, Y2", g.f("sqrtHalf", 0.707106781186547524))
		g.p("VANDPS Y0, Y2, Y3")
		g.p("VSUBPS %s, Y0, Y0", g.f("one", 1))
		g.p("VADDPS Y3, Y0, Y0") // m < sqrt(1/2) ? 2m-1 : m-1
		g.p("VANDPS %s, Y2, Y4", g.f("one", 1))
		g.p("VSUBPS Y4, Y1, Y1")
		g.p("VMULPS Y0, Y0, Y3") // z
		g.horner("Y4", "Y0", "logP", logPoly)
		g.p("VMULPS Y0, Y4, Y4")
		g.p("VMULPS Y3, Y4, Y4")
		g.p("VFMADD231PS %s, Y1, Y4", g.f("ln2Lo", -2.12194440e-4))
		g.p("VFNMADD231PS %s, Y3, Y4", g.f("half", 0.5))
		g.p("VADDPS Y4, Y0, Y0")
		g.p("VFMADD231PS %s, Y1, Y0", g.f("ln2Hi", 0.693359375))
		// log(+Inf) = +Inf, log(±0) = -Inf, log(x < 0 or NaN) = NaN.
		g.p("VMOVUPS %s, Y7", g.k("posInf", 0x7f800000))
		g.p("VCMPPS $0, Y7, Y5, Y6")
		g.p("VBLENDVPS Y6, Y7, Y0, Y0")
		g.p("VXORPS Y7, Y7, Y7")
		g.p("VCMPPS $0, Y7, Y5, Y6")
		g.p("VMOVUPS %s, Y8", g.k("negInf", 0xff800000))
		g.p("VBLENDVPS Y6, Y8, Y0, Y0")
		g.p("VCMPPS $9, Y7, Y5, Y6") // not (x >= 0), true for NaN
		g.p("VMOVUPS %s, Y8", g.k("qNaN", 0x7fc00000))
		g.p("VBLENDVPS Y6, Y8, Y0, Y0")
	}},
	{"erfF32AVX2", func(g *gen) { g.erf("Y0", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7") }},
	{"tanhF32AVX2", func(g *gen) {
		g.p("VANDPS %s, Y0, Y6", g.k("absMask", 0x7fffffff))
		g.p("VANDPS %s, Y0, Y5", g.k("signMask", 0x80000000))
		g.p("VADDPS Y6, Y6, Y0")
		g.exp("Y0", "Y1", "Y2", "Y3", "Y4")
		g.p("VADDPS %s, Y0, Y0", g.f("one", 1))
		g.p("VMOVUPS %s, Y2", g.f("two", 2))
		g.p("VDIVPS Y0, Y2, Y0")
		g.p("VMOVUPS %s, Y2", g.f("one", 1))
		g.p("VSUBPS Y0, Y2, Y0") // 1 - 2/(exp(2z)+1)
		g.p("VMULPS Y6, Y6, Y7")
		g.horner("Y8", "Y7", "tanhP", tanhPoly)
		g.p("VMULPS Y7, Y8, Y8")
		g.p("VFMADD213PS Y6, Y6, Y8") // z + z*s*p(s)
		g.p("VCMPPS $14, %s, Y6, Y9", g.f("tanhSplit", 0.625))
		g.p("VBLENDVPS Y9, Y0, Y8, Y0")
		g.p("VORPS Y5, Y0, Y0")
	}},
	{"sigmoidF32AVX2", func(g *gen) { g.sigmoid("Y0", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6") }},
	{"geluF32AVX2", func(g *gen) {
		g.p("VMULPS %s, Y0, Y10", g.f("half", 0.5))
		g.p("VMULPS %s, Y0, Y0", g.f("sqrtHalf", 0.707106781186547524))
		g.erf("Y0", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7")
		g.p("VFMADD213PS Y10, Y10, Y0") // h*erf + h
	}},
	{"geluTanhF32AVX2", func(g *gen) {
		// x * sigmoid(2u), u = sqrt(2/pi) * (x + 0.044715 x³)
		g.p("VMOVAPS Y0, Y10")
		g.p("VMULPS Y0, Y0, Y1")
		g.p("VMOVUPS %s, Y2", g.f("one", 1))
		g.p("VFMADD132PS %s, Y2, Y1", g.f("geluCubic", 0.044715)) // x²*c + 1
		g.p("VMULPS Y10, Y1, Y1")
		g.p("VMULPS %s, Y1, Y0", g.f("geluTwoSqrt2Pi", float32(2*math.Sqrt(2/math.Pi))))
		g.sigmoid("Y0", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6")
		g.p("VMULPS Y10, Y0, Y0")
	}},
	{"sqrtF32AVX2", func(g *gen) { g.p("VSQRTPS Y0, Y0") }},
	{"rsqrtF32AVX2", func(g *gen) {
		g.p("VSQRTPS Y0, Y1")
		g.p("VMOVUPS %s, Y0", g.f("one", 1))
		g.p("VDIVPS Y1, Y0, Y0")
	}},
}

// wideFns get a 512-bit twin (name AVX2 -> AVX512, 16 lanes), translated
// from the 256-bit body by widen: the same operations in the same order,
// so both give bitwise the same results. log is left out: it uses its
// compare masks as data. exp's twin is written natively (expNative:
// constants in registers, VSCALEFPS), bitwise the same too.
var wideFns = map[string]bool{"expF32AVX2": true, "erfF32AVX2": true, "tanhF32AVX2": true,
	"sigmoidF32AVX2": true, "geluF32AVX2": true, "geluTanhF32AVX2": true}

var (
	yReg    = regexp.MustCompile(`\bY(\d+)\b`)
	cmpRe   = regexp.MustCompile(`^VCMPPS (\$\d+), ([^,]+), ([^,]+), Y(\d+)$`)
	blendRe = regexp.MustCompile(`^VBLENDVPS Y(\d+), ([^,]+), ([^,]+), ([^,]+)$`)
	logicRe = regexp.MustCompile(`^V(AND|OR|XOR)PS `)
)

// widen translates one line of a 256-bit body to 512 bits: YMM to ZMM
// registers (constants are 64 bytes), a compare into a vector mask to a
// compare into an opmask (kreg), a variable blend to a masked blend (a
// sign-bit mask not made by a compare first moved to an opmask with
// VPMOVD2M), and the bitwise operations to their AVX-512F integer forms
// (VANDPS on ZMM needs AVX-512DQ). kmask holds the vector registers whose
// last writer was a compare. The bodies keep one mask live at a time.
func widen(line string, kmask map[string]bool) []string {
	if m := cmpRe.FindStringSubmatch(line); m != nil {
		kmask[m[4]] = true
		return []string{fmt.Sprintf("VCMPPS %s, %s, %s, %s", m[1], zmm(m[2]), zmm(m[3]), kreg(m[4]))}
	}
	if m := blendRe.FindStringSubmatch(line); m != nil {
		// VBLENDVPS mask, a, b, dst: dst = mask ? a : b; VBLENDMPS a, b, k, dst likewise.
		var pre []string
		if !kmask[m[1]] {
			pre = append(pre, fmt.Sprintf("VPMOVD2M Z%s, %s", m[1], kreg(m[1])))
		}
		delete(kmask, strings.TrimPrefix(m[4], "Y"))
		return append(pre, fmt.Sprintf("VBLENDMPS %s, %s, %s, %s", zmm(m[2]), zmm(m[3]), kreg(m[1]), zmm(m[4])))
	}
	if f := strings.Fields(line); len(f) > 1 {
		delete(kmask, strings.TrimPrefix(f[len(f)-1], "Y")) // the destination
	}
	if m := logicRe.FindStringSubmatch(line); m != nil {
		op := map[string]string{"AND": "VPANDD ", "OR": "VPORD ", "XOR": "VPXORD "}[m[1]]
		return []string{op + zmm(line[len(m[0]):])}
	}
	return []string{zmm(line)}
}

// kreg is the opmask standing for vector mask register Y(n): K1..K7 (K0
// cannot mask).
func kreg(n string) string {
	var i int
	fmt.Sscan(n, &i)
	return fmt.Sprintf("K%d", i%7+1)
}

func zmm(s string) string { return yReg.ReplaceAllString(s, "Z$1") }

// bcst turns a 512-bit instruction's constant operand into a 4-byte
// broadcast (a load of one lane: VBROADCASTSS, or the instruction's
// embedded broadcast), so that no load of a 64-byte constant can straddle
// two cache lines (the linker aligns data to 32 bytes only).
func bcst(line string) string {
	if !strings.Contains(line, "<>(SB)") {
		return line
	}
	op, rest, _ := strings.Cut(line, " ")
	if op == "VMOVUPS" {
		return "VBROADCASTSS " + rest
	}
	return op + ".BCST " + rest
}

func (g *gen) function(name string, body func(g *gen), wide bool) {
	lanes, vz := 8, "Y0"
	if wide {
		lanes, vz = 16, "Z0"
	}
	fmt.Fprintf(&g.w, "\n// func %s(dst, x *float32, n int)\n", name)
	fmt.Fprintf(&g.w, "TEXT ·%s(SB), NOSPLIT, $0-24\n", name)
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ x+8(FP), SI")
	g.p("MOVQ n+16(FP), CX")
	g.p("XORQ AX, AX")
	g.p("TESTQ CX, CX")
	g.p("JZ done")
	fmt.Fprintf(&g.w, "loop:\n")
	g.p("VMOVUPS (SI)(AX*4), %s", vz)
	if !wide {
		body(g)
	} else {
		sub := &gen{consts: g.consts, order: g.order}
		body(sub)
		g.order = sub.order
		kmask := map[string]bool{}
		for _, line := range strings.Split(strings.TrimRight(sub.w.String(), "\n"), "\n") {
			for _, l := range widen(strings.TrimSpace(line), kmask) {
				g.p("%s", bcst(l))
			}
		}
	}
	g.p("VMOVUPS %s, (DI)(AX*4)", vz)
	g.p("ADDQ $%d, AX", lanes)
	g.p("CMPQ AX, CX")
	g.p("JB loop")
	fmt.Fprintf(&g.w, "done:\n")
	g.p("VZEROUPPER")
	g.p("RET")
}

// The native 512-bit loops below keep exp's constants in Z16..Z27
// (loaded once per call by expConsts) and compute 2^n with VSCALEFPS
// instead of building it in two integer halves: the same operations as
// the 256-bit exp up to that point, and VSCALEFPS rounds p*2^n once as
// the two exact-then-rounding multiplies do, so the results are bitwise
// those of expF32AVX2 (TestVectorMathWideMatchesNarrow) with 10 fewer
// instructions a vector (no constant loads, no integer 2^n).
const (
	zExpHi, zExpLo, zLog2e, zLn2Hi, zLn2Lo = "Z16", "Z17", "Z18", "Z19", "Z20"
	zOne                                   = "Z27"
)

// rowBlock is softmax.go's: the elements of a block of rows.
const rowBlock = 4096

func zExpP(i int) string { return fmt.Sprintf("Z%d", 21+i) }

func (g *gen) expConsts() {
	g.p("VBROADCASTSS %s, %s", g.f("expHi", 89), zExpHi)
	g.p("VBROADCASTSS %s, %s", g.f("expLo", -104), zExpLo)
	g.p("VBROADCASTSS %s, %s", g.f("log2e", float32(math.Log2E)), zLog2e)
	g.p("VBROADCASTSS %s, %s", g.f("ln2Hi", 0.693359375), zLn2Hi)
	g.p("VBROADCASTSS %s, %s", g.f("ln2Lo", -2.12194440e-4), zLn2Lo)
	for i, c := range expPoly {
		g.p("VBROADCASTSS %s, %s", g.f(fmt.Sprintf("expP%d", i), c), zExpP(i))
	}
	g.p("VBROADCASTSS %s, %s", g.f("one", 1), zOne)
}

// exp512 computes exp(x) in place on ZMM x with the constants of
// expConsts; n, p, r2 are clobbered.
func (g *gen) exp512(x, n, p, r2 string) {
	g.p("VMINPS %s, %s, %s", x, zExpHi, x) // hi < x ? hi : x (NaN stays)
	g.p("VMAXPS %s, %s, %s", x, zExpLo, x)
	g.p("VMULPS %s, %s, %s", zLog2e, x, n)
	g.p("VRNDSCALEPS $0, %s, %s", n, n) // n, rounded to nearest even
	g.p("VFNMADD231PS %s, %s, %s", zLn2Hi, n, x)
	g.p("VFNMADD231PS %s, %s, %s", zLn2Lo, n, x)
	g.p("VMOVAPS %s, %s", zExpP(0), p)
	for i := 1; i < len(expPoly); i++ {
		g.p("VFMADD213PS %s, %s, %s", zExpP(i), x, p)
	}
	g.p("VMULPS %s, %s, %s", x, x, r2)
	g.p("VFMADD213PS %s, %s, %s", x, r2, p) // p*r² + r
	g.p("VADDPS %s, %s, %s", zOne, p, p)
	g.p("VSCALEFPS %s, %s, %s", n, p, x) // p * 2^n, rounded once
}

// expSoftmaxConsts loads exp512Softmax's constants: expConsts's
// reduction constants (but the upper clamp), Q's coefficients in
// Z21..Z25.
func (g *gen) expSoftmaxConsts() {
	g.p("VBROADCASTSS %s, %s", g.f("expLo", -104), zExpLo)
	g.p("VBROADCASTSS %s, %s", g.f("log2e", float32(math.Log2E)), zLog2e)
	g.p("VBROADCASTSS %s, %s", g.f("ln2Hi", 0.693359375), zLn2Hi)
	g.p("VBROADCASTSS %s, %s", g.f("ln2Lo", -2.12194440e-4), zLn2Lo)
	for i, c := range expQPoly {
		g.p("VBROADCASTSS %s, %s", g.f(fmt.Sprintf("expQ%d", i), c), zExpP(i))
	}
	g.p("VBROADCASTSS %s, %s", g.f("one", 1), zOne)
}

// exp512Softmax is exp512 with the degree-5 polynomial 1 + r*Q(r) in
// plain Horner form: five FMAs where exp512 spends seven multiplies and
// FMAs and an add, for the softmax rows, whose exponentials are the
// whole cost of a row (expSoftmaxMaxULP instead of ExpMaxULP). Their
// arguments are x - m <= 0 (m the row's maximum) or NaN, so only the
// lower clamp is kept (-Inf must not reach the reduction, where it
// would give Inf - Inf); positive arguments are out of its domain (8%
// faster in L1).
func (g *gen) exp512Softmax(x, n, p string) {
	g.p("VMAXPS %s, %s, %s", x, zExpLo, x)
	g.p("VMULPS %s, %s, %s", zLog2e, x, n)
	g.p("VRNDSCALEPS $0, %s, %s", n, n)
	g.p("VFNMADD231PS %s, %s, %s", zLn2Hi, n, x)
	g.p("VFNMADD231PS %s, %s, %s", zLn2Lo, n, x)
	g.p("VMOVAPS %s, %s", zExpP(0), p)
	for i := 1; i < len(expQPoly); i++ {
		g.p("VFMADD213PS %s, %s, %s", zExpP(i), x, p)
	}
	g.p("VFMADD213PS %s, %s, %s", zOne, x, p) // 1 + r*Q(r)
	g.p("VSCALEFPS %s, %s, %s", n, p, x)
}

// hsum folds the 16 lanes of ZMM register number z into its low lane,
// clobbering Z(t).
func (g *gen) hsum(z, t int) {
	g.p("VEXTRACTF32X8 $1, Z%d, Y%d", z, t)
	g.p("VADDPS Y%d, Y%d, Y%d", t, z, z)
	g.p("VEXTRACTF128 $1, Y%d, X%d", z, t)
	g.p("VADDPS X%d, X%d, X%d", t, z, z)
	g.p("VMOVHLPS X%d, X%d, X%d", z, t, t)
	g.p("VADDPS X%d, X%d, X%d", t, z, z)
	g.p("VMOVSHDUP X%d, X%d", z, t)
	g.p("VADDSS X%d, X%d, X%d", t, z, z)
}

// hmax folds ZMM register z's lanes into its low lane by VMAXPS.
func (g *gen) hmax(z, t int) {
	g.p("VEXTRACTF32X8 $1, Z%d, Y%d", z, t)
	g.p("VMAXPS Y%d, Y%d, Y%d", t, z, z)
	g.p("VEXTRACTF128 $1, Y%d, X%d", z, t)
	g.p("VMAXPS X%d, X%d, X%d", t, z, z)
	g.p("VMOVHLPS X%d, X%d, X%d", z, t, t)
	g.p("VMAXPS X%d, X%d, X%d", t, z, z)
	g.p("VMOVSHDUP X%d, X%d", z, t)
	g.p("VMAXSS X%d, X%d, X%d", t, z, z)
}

func (g *gen) label(l string) { fmt.Fprintf(&g.w, "%s:\n", l) }

// expNative writes expF32AVX512(dst, x *float32, n int), n a multiple of
// 16.
func (g *gen) expNative() {
	fmt.Fprintf(&g.w, "\n// func expF32AVX512(dst, x *float32, n int)\n")
	fmt.Fprintf(&g.w, "TEXT ·expF32AVX512(SB), NOSPLIT, $0-24\n")
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ x+8(FP), SI")
	g.p("MOVQ n+16(FP), CX")
	g.expConsts()
	g.p("XORQ AX, AX")
	g.p("TESTQ CX, CX")
	g.p("JZ done")
	g.label("loop")
	g.p("VMOVUPS (SI)(AX*4), Z0")
	g.exp512("Z0", "Z1", "Z2", "Z3")
	g.p("VMOVUPS Z0, (DI)(AX*4)")
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, CX")
	g.p("JB loop")
	g.label("done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// expSubSum writes expSubSumF32AVX512(dst, x *float32, n int, m float32)
// float32: dst[i] = exp(x[i] - m) (the subtraction rounded first, as
// softmax's TIR computes it) over n, a multiple of 16, returning the sum
// of dst (16 lanes, then a tree).
func (g *gen) expSubSum() {
	fmt.Fprintf(&g.w, "\n// func expSubSumF32AVX512(dst, x *float32, n int, m float32) float32\n")
	fmt.Fprintf(&g.w, "TEXT ·expSubSumF32AVX512(SB), NOSPLIT, $0-36\n")
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ x+8(FP), SI")
	g.p("MOVQ n+16(FP), CX")
	g.p("VBROADCASTSS m+24(FP), Z15")
	g.expConsts()
	g.p("VPXORD Z14, Z14, Z14")
	g.p("XORQ AX, AX")
	g.p("TESTQ CX, CX")
	g.p("JZ done")
	g.label("loop")
	g.p("VMOVUPS (SI)(AX*4), Z0")
	g.p("VSUBPS Z15, Z0, Z0")
	g.exp512("Z0", "Z1", "Z2", "Z3")
	g.p("VMOVUPS Z0, (DI)(AX*4)")
	g.p("VADDPS Z0, Z14, Z14")
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, CX")
	g.p("JB loop")
	g.label("done")
	g.hsum(14, 1)
	g.p("VMOVSS X14, ret+32(FP)")
	g.p("VZEROUPPER")
	g.p("RET")
}

// rowsPrologue loads the common arguments of the row functions (at their
// frame offsets; xOff < 0: none): x in SI, rows in R10, n in CX, the
// row's whole vectors (n &^ 15) in BX, the tail mask (n & 15 lanes) in
// K1; R11 (the NaN row count) is zeroed. It jumps to done when rows is 0.
func (g *gen) rowsPrologue(xOff, rowsOff, nOff int) {
	if xOff >= 0 {
		g.p("MOVQ x+%d(FP), SI", xOff)
	}
	g.p("MOVQ rows+%d(FP), R10", rowsOff)
	g.p("MOVQ n+%d(FP), CX", nOff)
	g.p("MOVQ CX, BX")
	g.p("ANDQ $-16, BX")
	g.p("MOVQ CX, R13")
	g.p("ANDQ $15, CX")
	g.p("MOVL $1, AX")
	g.p("SHLL CX, AX")
	g.p("DECL AX")
	g.p("KMOVW AX, K1")
	g.p("MOVQ R13, CX")
	g.p("XORQ R11, R11")
	g.p("TESTQ R10, R10")
	g.p("JZ done")
}

// The softmax row functions run one pass over a block of rows at a time
// (rowsMax over every row, then rowsExpSum, then rowsScale, the block in
// L1): the rows of a pass are independent, so the out-of-order core
// overlaps one row's horizontal reduction and the next row's loads
// instead of waiting on each row's chain of max, exp, sum and divide.

// rowsMax writes rowsMaxF32AVX512(x, m *float32, rows, n int, init
// float32): m[r] = max(init, row r) over rows contiguous rows of n > 0
// elements (the maximum of the lanes that are not NaN: the callers detect
// NaN rows by their sums).
func (g *gen) rowsMax() {
	fmt.Fprintf(&g.w, "\n// func rowsMaxF32AVX512(x, m *float32, rows, n int, init float32)\n")
	fmt.Fprintf(&g.w, "TEXT ·rowsMaxF32AVX512(SB), NOSPLIT, $0-36\n")
	g.p("MOVQ m+8(FP), R8")
	g.p("VBROADCASTSS init+32(FP), Z15")
	g.rowsPrologue(0, 16, 24)
	g.label("row")
	g.p("VMOVAPS Z15, Z8")
	g.p("VMOVAPS Z15, Z9")
	g.p("XORQ AX, AX")
	g.p("MOVQ BX, R12")
	g.p("ANDQ $-32, R12")
	g.p("JZ max16")
	g.label("max32")
	g.p("VMAXPS (SI)(AX*4), Z8, Z8")
	g.p("VMAXPS 64(SI)(AX*4), Z9, Z9")
	g.p("ADDQ $32, AX")
	g.p("CMPQ AX, R12")
	g.p("JB max32")
	g.label("max16")
	g.p("CMPQ AX, BX")
	g.p("JAE maxtail")
	g.p("VMAXPS (SI)(AX*4), Z8, Z8")
	g.label("maxtail")
	g.p("VMAXPS (SI)(BX*4), Z9, K1, Z9") // masked lanes keep init
	g.p("VMAXPS Z9, Z8, Z8")
	g.hmax(8, 9)
	g.p("VMOVSS X8, (R8)")
	g.p("LEAQ (SI)(CX*4), SI")
	g.p("ADDQ $4, R8")
	g.p("DECQ R10")
	g.p("JNZ row")
	g.label("done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// rowsExpSum writes rowsExpSubSumF32AVX512(dst, x, m, s *float32, rows,
// n int) int (store) or rowsExpSumF32AVX512(x, m, s *float32, rows, n int)
// int: s[r] = the sum of exp(x - m[r]) over row r (x - m rounded first;
// exp512Softmax's exponentials), the exponentials written to dst's row
// when store. It returns the
// number of rows whose sum is NaN.
func (g *gen) rowsExpSum(store bool) {
	name, args, frame, off := "rowsExpSumF32AVX512", "x, m, s *float32, rows, n int", 48, 0
	if store {
		name, args, frame, off = "rowsExpSubSumF32AVX512", "dst, x, m, s *float32, rows, n int", 56, 8
	}
	fmt.Fprintf(&g.w, "\n// func %s(%s) int\n", name, args)
	fmt.Fprintf(&g.w, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", name, frame)
	if store {
		g.p("MOVQ dst+0(FP), DI")
	}
	g.p("MOVQ m+%d(FP), R8", off+8)
	g.p("MOVQ s+%d(FP), R9", off+16)
	g.expSoftmaxConsts()
	g.rowsPrologue(off, off+24, off+32)
	g.label("row")
	g.p("VBROADCASTSS (R8), Z8")
	g.p("VPXORD Z14, Z14, Z14")
	g.p("XORQ AX, AX")
	g.p("TESTQ BX, BX")
	g.p("JZ tail")
	g.label("loop")
	g.p("PREFETCHT0 %d(SI)(AX*4)", 4*rowBlock) // the next block's row, while this one computes
	g.p("VMOVUPS (SI)(AX*4), Z0")
	g.p("VSUBPS Z8, Z0, Z0")
	g.exp512Softmax("Z0", "Z1", "Z2")
	if store {
		g.p("VMOVUPS Z0, (DI)(AX*4)")
	}
	g.p("VADDPS Z0, Z14, Z14")
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, BX")
	g.p("JB loop")
	g.label("tail")
	g.p("CMPQ BX, CX")
	g.p("JE fold")
	g.p("VMOVUPS.Z (SI)(BX*4), K1, Z0")
	g.p("VSUBPS Z8, Z0, Z0")
	g.exp512Softmax("Z0", "Z1", "Z2")
	if store {
		g.p("VMOVUPS Z0, K1, (DI)(BX*4)")
	}
	g.p("VADDPS Z0, Z14, K1, Z14")
	g.label("fold")
	g.hsum(14, 1)
	g.p("VMOVSS X14, (R9)")
	g.p("VUCOMISS X14, X14")
	g.p("JPC ordered") // parity set: unordered (NaN)
	g.p("INCQ R11")
	g.label("ordered")
	g.p("LEAQ (SI)(CX*4), SI")
	if store {
		g.p("LEAQ (DI)(CX*4), DI")
	}
	g.p("ADDQ $4, R8")
	g.p("ADDQ $4, R9")
	g.p("DECQ R10")
	g.p("JNZ row")
	g.label("done")
	g.p("MOVQ R11, ret+%d(FP)", off+40)
	g.p("VZEROUPPER")
	g.p("RET")
}

// rowsScale writes rowsScaleF32AVX512(dst, s *float32, rows, n int): dst
// row r *= 1/s[r] (softmax's normalization, within an ULP of dividing).
func (g *gen) rowsScale() {
	fmt.Fprintf(&g.w, "\n// func rowsScaleF32AVX512(dst, s *float32, rows, n int)\n")
	fmt.Fprintf(&g.w, "TEXT ·rowsScaleF32AVX512(SB), NOSPLIT, $0-32\n")
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ s+8(FP), R9")
	g.p("MOVQ DI, SI")
	g.rowsPrologue(-1, 16, 24)
	g.p("VBROADCASTSS %s, Z7", g.f("one", 1))
	g.label("row")
	g.p("VDIVPS.BCST (R9), Z7, Z1")
	g.p("XORQ AX, AX")
	g.p("TESTQ BX, BX")
	g.p("JZ tail")
	g.label("loop")
	g.p("VMULPS (DI)(AX*4), Z1, Z0")
	g.p("VMOVUPS Z0, (DI)(AX*4)")
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, BX")
	g.p("JB loop")
	g.label("tail")
	g.p("CMPQ BX, CX")
	g.p("JE next")
	g.p("VMULPS (DI)(BX*4), Z1, K1, Z0")
	g.p("VMOVUPS Z0, K1, (DI)(BX*4)")
	g.label("next")
	g.p("LEAQ (DI)(CX*4), DI")
	g.p("ADDQ $4, R9")
	g.p("DECQ R10")
	g.p("JNZ row")
	g.label("done")
	g.p("VZEROUPPER")
	g.p("RET")
}

// logSoftmaxOut writes logSoftmaxOutF32AVX512(dst, x, m, l *float32,
// rows, n int): dst row = (x row - m[r]) - l[r], each subtraction rounded
// as log-softmax's TIR writes them, the tails masked.
func (g *gen) logSoftmaxOut() {
	fmt.Fprintf(&g.w, "\n// func logSoftmaxOutF32AVX512(dst, x, m, l *float32, rows, n int)\n")
	fmt.Fprintf(&g.w, "TEXT ·logSoftmaxOutF32AVX512(SB), NOSPLIT, $0-48\n")
	g.p("MOVQ dst+0(FP), DI")
	g.p("MOVQ m+16(FP), R8")
	g.p("MOVQ l+24(FP), R9")
	g.rowsPrologue(8, 32, 40)
	g.label("row")
	g.p("VBROADCASTSS (R8), Z8")
	g.p("VBROADCASTSS (R9), Z9")
	g.p("XORQ AX, AX")
	g.p("TESTQ BX, BX")
	g.p("JZ tail")
	g.label("loop")
	g.p("VMOVUPS (SI)(AX*4), Z0")
	g.p("VSUBPS Z8, Z0, Z0")
	g.p("VSUBPS Z9, Z0, Z0")
	g.p("VMOVUPS Z0, (DI)(AX*4)")
	g.p("ADDQ $16, AX")
	g.p("CMPQ AX, BX")
	g.p("JB loop")
	g.label("tail")
	g.p("CMPQ BX, CX")
	g.p("JE next")
	g.p("VMOVUPS.Z (SI)(BX*4), K1, Z0")
	g.p("VSUBPS Z8, Z0, Z0")
	g.p("VSUBPS Z9, Z0, Z0")
	g.p("VMOVUPS Z0, K1, (DI)(BX*4)")
	g.label("next")
	g.p("LEAQ (SI)(CX*4), SI")
	g.p("LEAQ (DI)(CX*4), DI")
	g.p("ADDQ $4, R8")
	g.p("ADDQ $4, R9")
	g.p("DECQ R10")
	g.p("JNZ row")
	g.label("done")
	g.p("VZEROUPPER")
	g.p("RET")
}

func main() {
	g := &gen{consts: map[string]uint32{}}
	for _, f := range fns {
		g.function(f.name, f.body, false)
		if f.name == "expF32AVX2" {
			g.expNative()
		} else if wideFns[f.name] {
			g.function(strings.TrimSuffix(f.name, "AVX2")+"AVX512", f.body, true)
		}
	}
	g.expSubSum()
	g.rowsMax()
	g.rowsExpSum(true)
	g.rowsExpSum(false)
	g.rowsScale()
	g.logSoftmaxOut()
	var out bytes.Buffer
	out.WriteString("// Code generated by gen_math.go; DO NOT EDIT.\n\n//go:build !purego\n\n#include \"textflag.h\"\n\n")
	for _, name := range g.order {
		bits := g.consts[name]
		for i := range 16 { // 64 bytes: a ZMM operand (YMM reads the first half)
			fmt.Fprintf(&out, "DATA %s<>+%d(SB)/4, $0x%08x\n", name, 4*i, bits)
		}
		fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $64\n", name)
	}
	out.WriteString(strings.TrimRight(g.w.String(), "\n") + "\n")
	if err := os.WriteFile("math_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
