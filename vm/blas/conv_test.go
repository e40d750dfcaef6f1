package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nchwGeom is a dense NCHW-family geometry (NC + spatial data, OI +
// kernel weight, NC + spatial output).
func nchwGeom(batch, groups, inC, outC int, in, kern, stride, dil, pad []int) ConvGeom {
	g := ConvGeom{Batch: batch, Groups: groups, InC: inC, OutC: outC, Spatial: len(in)}
	for d := range in {
		g.In[d], g.Kernel[d], g.Stride[d], g.Dilation[d], g.Pad[d] = in[d], kern[d], stride[d], dil[d], pad[d]
		g.Out[d] = max(0, (in[d]+2*pad[d]-dil[d]*(kern[d]-1)-1)/stride[d]+1)
	}
	xs, ws, ys := 1, 1, 1
	for d := g.Spatial - 1; d >= 0; d-- {
		g.XS[d], g.WS[d], g.YS[d] = xs, ws, ys
		xs, ws, ys = xs*g.In[d], ws*g.Kernel[d], ys*g.Out[d]
	}
	g.XC, g.WI, g.YC = xs, ws, ys
	g.XN, g.WO, g.YN = xs*inC, ws*(inC/groups), ys*outC
	return g
}

func (g *ConvGeom) sizes() (nx, nw, ny int) {
	return g.Batch * g.XN, g.OutC * g.WO, g.Batch * g.YN
}

// naiveConv is the definition, one output element at a time in float64.
func naiveConv(g *ConvGeom, x, w []float32, ep ConvEpilogue) []float32 {
	_, _, ny := g.sizes()
	y := make([]float32, ny)
	icg, ocg := g.icg(), g.ocg()
	var o, t [3]int
	for n := range g.Batch {
		for oc := range g.OutC {
			grp := oc / ocg
			for px := range g.pixels() {
				r := px
				for d := g.Spatial - 1; d >= 0; d-- {
					o[d] = r % g.Out[d]
					r /= g.Out[d]
				}
				sum := 0.0
				for c := range icg {
					for tap := range g.taps() {
						r := tap
						for d := g.Spatial - 1; d >= 0; d-- {
							t[d] = r % g.Kernel[d]
							r /= g.Kernel[d]
						}
						xo := n*g.XN + (grp*icg+c)*g.XC
						wo := oc*g.WO + c*g.WI
						ok := true
						for d := range g.Spatial {
							i := o[d]*g.Stride[d] + t[d]*g.Dilation[d] - g.Pad[d]
							if i < 0 || i >= g.In[d] {
								ok = false
							}
							xo += i * g.XS[d]
							wo += t[d] * g.WS[d]
						}
						if ok {
							sum += float64(x[xo]) * float64(w[wo])
						}
					}
				}
				if ep.Bias != nil {
					sum += float64(ep.Bias[oc])
				}
				if ep.ReLU {
					sum = max(sum, 0)
				}
				yo := n*g.YN + oc*g.YC
				for d := range g.Spatial {
					yo += o[d] * g.YS[d]
				}
				y[yo] = float32(sum)
			}
		}
	}
	return y
}

func randF32(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// checkConv runs Conv on threads threads (with and without a cached
// packing) against naiveConv, normwise within 1e-5.
func checkConv(t *testing.T, g ConvGeom, threads int, ep ConvEpilogue, rng *rand.Rand) {
	t.Helper()
	nx, nw, ny := g.sizes()
	x, w := randF32(nx, rng), randF32(nw, rng)
	if ep.Bias != nil {
		ep.Bias = randF32(g.OutC, rng)
	}
	want := naiveConv(&g, x, w, ep)
	scale := 1.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	p := NewConvPlan(&g)
	var cache ConvWeightCache
	for round := range 3 {
		y := make([]float32, ny)
		for i := range y {
			y[i] = float32(math.NaN())
		}
		Conv(threads, p, x, w, cache.Get(&g, w), y, ep)
		for i := range y {
			if d := math.Abs(float64(y[i]) - float64(want[i])); !(d <= 1e-5*scale) {
				t.Fatalf("%+v round %d threads %d: y[%d] = %v, want %v", g, round, threads, i, y[i], want[i])
			}
		}
		if round == 1 {
			// Same slice, new contents: the cache must repack.
			for i := range w {
				w[i] = -w[i]
			}
			want = naiveConv(&g, x, w, ep)
		}
	}
}

func TestConvShapes(t *testing.T) {
	old := minConvWorkPerThread
	minConvWorkPerThread = 1 // several threads even on tiny shapes
	defer func() { minConvWorkPerThread = old }()
	rng := rand.New(rand.NewPCG(1, 2))
	one := []int{1, 1}
	cases := []ConvGeom{
		nchwGeom(2, 1, 3, 4, []int{8, 8}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(1, 1, 1, 1, []int{1, 1}, []int{1, 1}, one, one, []int{0, 0}),
		nchwGeom(2, 1, 64, 17, []int{5, 7}, []int{1, 1}, one, one, []int{0, 0}),
		nchwGeom(1, 1, 5, 7, []int{19, 17}, []int{7, 7}, []int{2, 2}, one, []int{3, 3}),
		nchwGeom(2, 1, 7, 13, []int{11, 9}, []int{3, 3}, one, []int{2, 2}, []int{2, 2}),
		nchwGeom(2, 6, 6, 6, []int{9, 9}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(2, 6, 6, 6, []int{9, 40}, []int{3, 3}, []int{2, 1}, one, []int{0, 0}),
		nchwGeom(2, 2, 8, 10, []int{7, 6}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(2, 1, 300, 7, []int{6, 6}, []int{1, 1}, one, one, []int{0, 0}), // k > kc
		nchwGeom(3, 1, 4, 6, []int{9}, []int{3}, []int{2}, []int{1}, []int{1}),
		nchwGeom(1, 3, 6, 9, []int{5, 4, 5}, []int{1, 2, 3}, []int{2, 1, 2}, []int{1, 1, 1}, []int{0, 1, 1}),
		nchwGeom(2, 1, 32, 40, []int{20, 21}, []int{3, 3}, one, one, []int{1, 1}),
		// Stride 2 inside the data, output rows of 17 and 19 pixels (whole
		// 16-pixel panels along a row, then row-crossing ones), channel
		// counts of 12x32 blocks, a 6x32 block and a partial one.
		nchwGeom(1, 1, 3, 30, []int{41, 40}, []int{7, 7}, []int{2, 2}, one, []int{0, 0}),
		nchwGeom(1, 1, 16, 64, []int{10, 37}, []int{1, 1}, []int{2, 2}, one, []int{0, 0}),
		nchwGeom(1, 1, 8, 23, []int{9, 40}, []int{3, 3}, []int{2, 2}, []int{2, 1}, []int{0, 0}),
		// Pixel-row form: 16-channel multiples, 7x7 and 14x14 outputs
		// (6-pixel panels across image rows), stride 2, a 1x1 kernel,
		// padding inside the data, channel counts past 16 panels.
		nchwGeom(1, 1, 24, 48, []int{9, 9}, []int{3, 3}, one, one, []int{0, 0}),
		nchwGeom(2, 1, 16, 32, []int{14, 14}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(1, 1, 16, 64, []int{15, 15}, []int{1, 1}, []int{2, 2}, one, []int{0, 0}),
		nchwGeom(1, 1, 3, 32, []int{23, 23}, []int{7, 7}, []int{2, 2}, one, []int{3, 3}),
		nchwGeom(1, 1, 20, 40, []int{8, 58}, []int{3, 3}, one, one, []int{0, 0}),
		nchwGeom(3, 1, 5, 16, []int{4, 5}, []int{2, 2}, one, []int{2, 2}, []int{1, 0}),
	}
	for i, g := range cases {
		for _, threads := range []int{1, 3} {
			// Both GEMM forms: the pixel-row form where the geometry
			// picks it, and the channel-row form for every geometry.
			for _, noPixelRows := range []bool{false, true} {
				t.Run(fmt.Sprint(i, "/", threads, "/", noPixelRows), func(t *testing.T) {
					defer func(old bool) { convNoPixelRows = old }(convNoPixelRows)
					convNoPixelRows = noPixelRows
					checkConv(t, g, threads, ConvEpilogue{}, rng)
					checkConv(t, g, threads, ConvEpilogue{Bias: []float32{}, ReLU: true}, rng)
				})
			}
		}
	}
}

// TestConvForms: the pixel-row form is picked where it computes less
// (channel counts of whole 16-column panels, small images), and not for
// grouped convolutions or channel counts it would pad much more.
func TestConvForms(t *testing.T) {
	one := []int{1, 1}
	for _, c := range []struct {
		g    ConvGeom
		want bool
	}{
		{nchwGeom(1, 1, 64, 64, []int{58, 58}, []int{3, 3}, one, one, []int{0, 0}), true},
		{nchwGeom(1, 1, 512, 512, []int{9, 9}, []int{3, 3}, one, one, []int{0, 0}), true},
		{nchwGeom(16, 1, 32, 32, []int{34, 34}, []int{3, 3}, one, one, []int{0, 0}), true},
		{nchwGeom(1, 1, 8, 17, []int{34, 34}, []int{3, 3}, one, one, []int{0, 0}), false},
		{nchwGeom(1, 2, 64, 64, []int{10, 10}, []int{3, 3}, one, one, []int{0, 0}), false},
		{nchwGeom(1, 64, 64, 64, []int{10, 10}, []int{3, 3}, one, one, []int{0, 0}), false},
		{nchwGeom(16, 1, 64, 64, []int{16, 16}, []int{1, 1}, one, one, []int{0, 0}), false},
		{nchwGeom(1, 1, 3, 64, []int{230, 230}, []int{7, 7}, []int{2, 2}, one, []int{0, 0}), true},
	} {
		require.Equal(t, c.want, c.g.pixelRows(), "%+v", c.g)
	}
}

// FuzzConv checks Conv against the definition on random geometries; the
// seed corpus runs in plain go test.
func FuzzConv(f *testing.F) {
	f.Add(uint8(2), uint8(3), uint8(4), uint8(5), uint8(3), uint8(1), uint8(1), uint8(1), uint8(1), uint8(1), false)
	f.Add(uint8(1), uint8(6), uint8(6), uint8(9), uint8(3), uint8(2), uint8(2), uint8(6), uint8(0), uint8(2), true)
	f.Add(uint8(3), uint8(1), uint8(7), uint8(4), uint8(1), uint8(1), uint8(1), uint8(1), uint8(0), uint8(3), false)
	f.Add(uint8(1), uint8(8), uint8(16), uint8(12), uint8(5), uint8(2), uint8(1), uint8(2), uint8(2), uint8(1), true)
	f.Fuzz(func(t *testing.T, batch, inC, outC, size, kern, stride, dil, groups, pad, spatial uint8, relu bool) {
		b, ic, oc := int(batch%3)+1, int(inC%9)+1, int(outC%9)+1
		grp := int(groups%4) + 1
		ic, oc = ic*grp, oc*grp
		sp := int(spatial%3) + 1
		in, k, s, d, p := make([]int, sp), make([]int, sp), make([]int, sp), make([]int, sp), make([]int, sp)
		for i := range sp {
			// Smaller images in 3-D keep an execution well under a second.
			in[i], k[i], s[i], d[i], p[i] = int(size)%(14-3*sp)+1+i, int(kern%4)+1, int(stride%3)+1, int(dil%2)+1, int(pad%3)
		}
		g := nchwGeom(b, grp, ic, oc, in, k, s, d, p)
		if g.pixels() == 0 {
			return
		}
		rng := rand.New(rand.NewPCG(uint64(size), uint64(kern)))
		ep := ConvEpilogue{ReLU: relu}
		if relu {
			ep.Bias = []float32{}
		}
		checkConv(t, g, 1+int(batch%2), ep, rng)
	})
}

// BenchmarkConvSideBySide times the convolutions on one and on
// two threads, interleaved with the FMA peak loop, and reports each as a
// fraction of the peak measured in the same run (go test ./vm/blas -run
// '^$' -bench ConvSideBySide -benchtime 5x). The data is pre-padded, as
// the legalized TIR's pad stage leaves it.
func BenchmarkConvSideBySide(b *testing.B) {
	if !hasAVX2FMA {
		b.Skip("no AVX2/FMA")
	}
	one := []int{1, 1}
	shapes := []struct {
		name string
		g    ConvGeom
	}{
		{"3x3_32to32_32x32_b16", nchwGeom(16, 1, 32, 32, []int{34, 34}, []int{3, 3}, one, one, []int{0, 0})},
		{"3x3_64to64_16x16_b16", nchwGeom(16, 1, 64, 64, []int{18, 18}, []int{3, 3}, one, one, []int{0, 0})},
		// The same with the padding folded in (taps outside the data:
		// the slab path, conv_slab.go).
		{"3x3_32to32_32x32_b16_pad", nchwGeom(16, 1, 32, 32, []int{32, 32}, []int{3, 3}, one, one, []int{1, 1})},
		{"3x3_64to64_16x16_b16_pad", nchwGeom(16, 1, 64, 64, []int{16, 16}, []int{3, 3}, one, one, []int{1, 1})},
		// The bundled CNN's three layers at batch 16 (bench/ort cnn_b16).
		{"cnn0_3to32_32x32_b16_pad", nchwGeom(16, 1, 3, 32, []int{32, 32}, []int{3, 3}, one, one, []int{1, 1})},
		{"cnn1_32to64_16x16_b16_pad", nchwGeom(16, 1, 32, 64, []int{16, 16}, []int{3, 3}, one, one, []int{1, 1})},
		{"cnn2_64to64_8x8_b16_pad", nchwGeom(16, 1, 64, 64, []int{8, 8}, []int{3, 3}, one, one, []int{1, 1})},
		{"r18_3x3_64to64_56_pad", nchwGeom(1, 1, 64, 64, []int{56, 56}, []int{3, 3}, one, one, []int{1, 1})},
		{"1x1_64to64_16x16_b16", nchwGeom(16, 1, 64, 64, []int{16, 16}, []int{1, 1}, one, one, []int{0, 0})},
		{"dw3x3_64_16x16_b16", nchwGeom(16, 64, 64, 64, []int{18, 18}, []int{3, 3}, one, one, []int{0, 0})},
		// ResNet-18's convolutions at 224x224, batch 1.
		{"r18_7x7s2_3to64_112", nchwGeom(1, 1, 3, 64, []int{230, 230}, []int{7, 7}, []int{2, 2}, one, []int{0, 0})},
		{"r18_3x3_64to64_56", nchwGeom(1, 1, 64, 64, []int{58, 58}, []int{3, 3}, one, one, []int{0, 0})},
		{"r18_3x3_128to128_28", nchwGeom(1, 1, 128, 128, []int{30, 30}, []int{3, 3}, one, one, []int{0, 0})},
		{"r18_3x3_256to256_14", nchwGeom(1, 1, 256, 256, []int{16, 16}, []int{3, 3}, one, one, []int{0, 0})},
		{"r18_3x3_512to512_7", nchwGeom(1, 1, 512, 512, []int{9, 9}, []int{3, 3}, one, one, []int{0, 0})},
		{"r18_3x3s2_256to512_7", nchwGeom(1, 1, 256, 512, []int{16, 16}, []int{3, 3}, []int{2, 2}, one, []int{0, 0})},
		{"r18_1x1s2_256to512_7", nchwGeom(1, 1, 256, 512, []int{14, 14}, []int{1, 1}, []int{2, 2}, one, []int{0, 0})},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			g := sh.g
			rng := rand.New(rand.NewPCG(1, 1))
			nx, nw, ny := g.sizes()
			x, w, y := randF32(nx, rng), randF32(nw, rng), make([]float32, ny)
			p := NewConvPlan(&g)
			pw := PackConvWeights(&g, w) // packed once, as frozen weights are
			// The channel-row form of the same convolution, timed alongside.
			convNoPixelRows = true
			pRows := NewConvPlan(&g)
			pwRows := PackConvWeights(&g, w)
			convNoPixelRows = false
			flop := 2 * float64(g.Batch*g.OutC*g.pixels()*g.icg()*g.taps())
			var t1, t2, tp, c1, cp, tRows []time.Duration
			const peakIters = 1 << 19
			cpu := func() time.Duration { return time.Duration(processCPUTime() * 1e9) }
			for range b.N {
				start := time.Now()
				Conv(1, pRows, x, w, pwRows, y, ConvEpilogue{})
				tRows = append(tRows, time.Since(start))
				for _, th := range []int{1, 2} {
					start, cstart := time.Now(), cpu()
					Conv(th, p, x, w, pw, y, ConvEpilogue{})
					el, cel := time.Since(start), cpu()-cstart
					if th == 1 {
						t1, c1 = append(t1, el), append(c1, cel)
					} else {
						t2 = append(t2, el)
					}
				}
				start, cstart := time.Now(), cpu()
				fmaPeak(peakIters)
				tp, cp = append(tp, time.Since(start)), append(cp, cpu()-cstart)
			}
			med := func(d []time.Duration) float64 {
				slices.Sort(d)
				return d[len(d)/2].Seconds()
			}
			peak := float64(peakIters) * 192 / med(tp)
			b.ReportMetric(flop/med(t1)/1e9, "GFLOP/s-1core")
			b.ReportMetric(flop/med(t1)/peak, "peak-frac-1core")
			// The same in CPU time: on a shared machine it leaves out the
			// time the benchmark was descheduled.
			if med(c1) > 0 && med(cp) > 0 {
				b.ReportMetric(flop/med(c1)/(float64(peakIters)*192/med(cp)), "peak-frac-1core-cpu")
			}
			b.ReportMetric(med(t1)/med(t2), "speedup-2cores")
			b.ReportMetric(med(tRows)/med(t1), "chanrows/default")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// TestTransposeBlock checks the C block read-out on sizes around the 8x8
// kernel with padded strides.
func TestTransposeBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, rows := range []int{1, 7, 8, 9, 17, 54} {
		for _, cols := range []int{1, 8, 15, 16, 33} {
			lds, ldd := cols+3, rows+1
			src := randF32((rows-1)*lds+cols, rng)
			dst := make([]float32, (cols-1)*ldd+rows)
			transposeBlock(dst, ldd, src, lds, rows, cols)
			for i := range cols {
				for j := range rows {
					require.Equal(t, src[j*lds+i], dst[i*ldd+j], "rows %d cols %d: [%d][%d]", rows, cols, i, j)
				}
			}
		}
	}
}

// TestBiasReLU: the one-pass bias (and ReLU) store gives AddScalarF32's
// and MaxScalarF32's results bit for bit, NaN and signed zeros
// included, at every length around the vector widths.
func TestBiasReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -1e-30, 1e-30}
	for n := range 75 {
		src := randF32(n, rng)
		for i := range src {
			if rng.IntN(4) == 0 {
				src[i] = specials[rng.IntN(len(specials))]
			}
		}
		for _, b := range []float32{0.5, -0.25, 0, float32(math.Copysign(0, -1)), float32(math.NaN())} {
			for _, relu := range []bool{false, true} {
				want, got := make([]float32, n), make([]float32, n+1)
				got[n] = 42 // past the end: untouched
				biasReLUGo(want, src, b, relu)
				biasReLU(got[:n], src, b, relu)
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "n %d b %v relu %v: [%d] of %v", n, b, relu, i, src[i])
				}
				require.Equal(t, float32(42), got[n])
			}
		}
	}
}

// TestScalarChain: the one-pass chain gives the element functions'
// results bit for bit (the division against DivF32 by a splat), at every
// length around the vector widths, in place and not.
func TestScalarChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), -1e-30, 3e38}
	for n := range 75 {
		src := randF32(n, rng)
		for i := range src {
			if rng.IntN(4) == 0 {
				src[i] = specials[rng.IntN(len(specials))]
			}
		}
		for trial := range 6 {
			ops := make([]ChainOp, trial)
			for i := range ops {
				ops[i] = ChainOp{Op: ChainKind(rng.IntN(4)), S: float32(rng.NormFloat64())}
				if rng.IntN(5) == 0 && ops[i].Op != ChainMax {
					ops[i].S = specials[rng.IntN(len(specials))]
				}
			}
			want := slices.Clone(src)
			for _, o := range ops {
				switch o.Op {
				case ChainAdd:
					AddScalarF32(want, want, o.S)
				case ChainMul:
					ScaleF32(want, want, o.S)
				case ChainDiv:
					splat := make([]float32, n)
					for i := range splat {
						splat[i] = o.S
					}
					DivF32(want, want, splat)
				default:
					MaxScalarF32(want, want, o.S)
				}
			}
			got := make([]float32, n+1)
			got[n] = 42
			ScalarChainF32(got[:n], src, ops)
			inPlace := slices.Clone(src)
			ScalarChainF32(inPlace, inPlace, ops)
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "n %d ops %v: [%d] of %v", n, ops, i, src[i])
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(inPlace[i]), "in place")
			}
			require.Equal(t, float32(42), got[n])
		}
	}
}

// TestConvChainEpilogue: a per-channel chain on the way to the output is
// the plain convolution followed by ScalarChainF32 on each channel's
// rows, bit for bit, in both GEMM forms.
func TestConvChainEpilogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	one := []int{1, 1}
	for i, g := range []ConvGeom{
		nchwGeom(2, 1, 16, 32, []int{14, 14}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(1, 1, 5, 7, []int{9, 11}, []int{3, 3}, []int{2, 1}, one, []int{1, 0}),
	} {
		for _, threads := range []int{1, 2} {
			nx, nw, ny := g.sizes()
			x, w := randF32(nx, rng), randF32(nw, rng)
			const steps = 3
			chain := make([]ChainOp, g.OutC*steps)
			for c := range g.OutC {
				chain[c*steps] = ChainOp{ChainAdd, float32(rng.NormFloat64())}
				chain[c*steps+1] = ChainOp{ChainDiv, float32(rng.NormFloat64())}
				chain[c*steps+2] = ChainOp{ChainMax, -0.5}
			}
			p := NewConvPlan(&g)
			want := make([]float32, ny)
			Conv(threads, p, x, w, nil, want, ConvEpilogue{})
			for n := range g.Batch {
				for c := range g.OutC {
					plane := want[n*g.YN+c*g.YC : n*g.YN+c*g.YC+g.pixels()]
					ScalarChainF32(plane, plane, chain[c*steps:(c+1)*steps])
				}
			}
			got := make([]float32, ny)
			Conv(threads, p, x, w, nil, got, ConvEpilogue{Chain: chain, ChainLen: steps})
			for j := range want {
				require.Equal(t, math.Float32bits(want[j]), math.Float32bits(got[j]), "case %d threads %d [%d]", i, threads, j)
			}
		}
	}
}
