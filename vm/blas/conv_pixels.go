package blas

import "slices"

// # Pixel-row convolution
//
// Conv's default GEMM puts output channels on the micro-kernel's rows
// (6-row A panels of weights) and output pixels on its 16-wide columns
// (B panels gathered from the data). That wastes work when the channel
// count is not a multiple of 6 (64 channels compute 72 rows) and when the
// pixel count of an image is not a multiple of 16 (a 7x7 output computes
// 64 columns for 49 pixels, a third more), and the 16-pixel panels of
// small images cross image rows, which only an indexed gather packs.
//
// The pixel-row form is the transposed product, per image n:
//
//	Y^T[p, oc] = sum_k Col^T[p, k] * W^T[k, oc]
//
// with the pixels on the rows (6-pixel A panels, gathered per k as 6
// consecutive data elements when the 6 pixels lie on one output row) and
// the output channels on the 16-wide columns (B panels of the weights,
// packed once: ConvWeights.bt). Channel counts that are multiples of 16
// (every CNN layer of 16 channels or more in practice) waste nothing, and
// the pixel dimension rounds up to 6 only. The scratch C block holds
// pixels x channels; each channel's row is read out of it (a strided
// read of one block, small next to the product) and finished and stored
// as in the channel-row form (finishRow), so epilogues and layouts are
// shared.
//
// Conv picks the form per geometry (ConvGeom.pixelRows) by the work each
// computes, padding included; the weights are packed for the form the
// geometry picks (the cache key includes it).

// pixelRows reports whether convolutions of geometry g run in the
// pixel-row form: ungrouped, and no more padded work than the
// channel-row form (a 12-row block of it costs the same as a 12-pixel
// block here), counting the read-out's cost for short k.
func (g *ConvGeom) pixelRows() bool {
	if g.Groups != 1 || g.OutC == 0 || convNoPixelRows {
		return false
	}
	np := g.pixels()
	if np == 0 {
		return false
	}
	// Channel rows: roundUp(ocg, mr) rows over pixel blocks of whole
	// 16-column panels (as Conv splits them).
	blocks := ceilDiv(np, convPixBlock)
	pixBlock := roundUp(ceilDiv(np, blocks), nr)
	chanRows := roundUp(g.OutC, mr) * pixBlock * ceilDiv(np, pixBlock)
	// Pixel rows: roundUp(pixels, mr) rows per block, the channels in
	// whole 16-column panels.
	pb := pixelRowBlock(np)
	pixRows := roundUp(g.OutC, nr) * roundUp(pb, mr) * ceilDiv(np, pb)
	// Reading the channels' rows out of the block costs about 16 steps
	// of k per output, which counts when k is short (a 1x1 kernel over
	// 64 channels ran 13% slower in this form with 2% less work).
	k := g.icg() * g.taps()
	if k < 128 {
		return pixRows*(k+16) < chanRows*k
	}
	return pixRows <= chanRows
}

// convNoPixelRows turns the pixel-row form off (tests compare the forms).
var convNoPixelRows bool

// convPixBlock is the channel-row form's largest pixel block.
const convPixBlock = 256

// maxPixelRowBlock bounds the pixels of one pixel-row task: its A block
// (pixels x kc) stays in L2 next to the weights' panels streaming by.
const maxPixelRowBlock = 96

// pixelRowBlock is the pixel block of the pixel-row form for np pixels:
// the fewest blocks of at most maxPixelRowBlock, of equal size in whole
// 6-pixel panels.
func pixelRowBlock(np int) int {
	blocks := ceilDiv(np, maxPixelRowBlock)
	return roundUp(ceilDiv(np, blocks), mr)
}

// packWeightsT packs the (OutC x k) weight matrix dense (rows in kIndex
// order) as the pixel-row form's B: per kc block, roundUp(OutC, nr)
// columns in nr-column panels (packB's layout), columns past OutC zero.
func packWeightsT(g *ConvGeom, dense []float32, k int) []float32 {
	cols := roundUp(g.OutC, nr)
	bt := make([]float32, cols*k+packSlack)
	kb := convKC(k)
	for pc := 0; pc < k; pc += kb {
		kcur := min(kb, k-pc)
		packB(bt[pc*cols:], dense, max(k, 1), true, pc, 0, kcur, g.OutC, 0, cols/nr)
	}
	return bt
}

// gemmBlockT computes output pixels [p0, p1) of image n for the output
// channels [c0, c1) (c0 a multiple of nr; c1 a multiple of nr or OutC)
// in the pixel-row form, gathering the data from src.
func (r *convRun) gemmBlockT(s *convScratch, src convSource, n, p0, p1, c0, c1 int) {
	p, g := src.p, &r.p.geom
	mcur := p1 - p0
	rows := roundUp(mcur, mr)
	ldc := roundUp(c1-c0, nr)
	s.c = growF32(s.c, rows*ldc)
	c := s.c[:rows*ldc]
	clear(c)
	k := p.k
	cols := roundUp(g.OutC, nr)
	kb := convKC(k)
	for pc := 0; pc < k; pc += kb {
		kcur := min(kb, k-pc)
		s.bp = growF32(s.bp, rows*kcur+packSlack)
		src.packPixels(s.bp, pc, kcur, p0, p1)
		tiles(kcur, s.bp, r.pw.bt[pc*cols+c0*kcur:], c, ldc, rows, ldc)
	}
	// The block transposed to one row per channel, each finished and
	// stored.
	nch := min(c1, g.OutC) - c0
	s.row = growF32(s.row, nch*mcur)
	transposeBlock(s.row, mcur, c, ldc, mcur, nch)
	ybase := n * g.YN
	for o := range nch {
		r.finishRow(s, s.row[o*mcur:(o+1)*mcur], n, c0+o, ybase+(c0+o)*g.YC, p0)
	}
}

// tiles runs the micro-kernels over a (rows x cols) block of C (rows a
// multiple of mr, cols of nr) from packed A panels a (mr rows each) and B
// panels b (nr columns each), both kcur deep: 12x32 blocks where the
// AVX-512 kernels are, then the 6-row and 16-column leftovers.
func tiles(kcur int, a, b, c []float32, ldc, rows, cols int) {
	kern, wide, wideLast, wideOne := activeKernel.fn, activeKernel.wide, activeKernel.wideLast, activeKernel.wideOne
	for jr := 0; jr < cols; {
		if wide != nil && jr+2*nr <= cols && rows >= 2*mr {
			bpanels := b[jr*kcur : (jr+2*nr)*kcur]
			ir := 0
			for ; ir+2*mr <= rows; ir += 2 * mr {
				wide(kcur, a[ir*kcur:(ir+2*mr)*kcur], bpanels, c[ir*ldc+jr:], ldc, false)
			}
			if ir < rows {
				wideLast(kcur, a[ir*kcur:(ir+mr)*kcur], bpanels, c[ir*ldc+jr:], ldc, false)
			}
			jr += 2 * nr
			continue
		}
		bpanel := b[jr*kcur : (jr+nr)*kcur]
		ir := 0
		if wideOne != nil {
			for ; ir+2*mr <= rows; ir += 2 * mr {
				wideOne(kcur, a[ir*kcur:(ir+2*mr)*kcur], bpanel, c[ir*ldc+jr:], ldc)
			}
		}
		for ; ir < rows; ir += mr {
			kern(kcur, a[ir*kcur:(ir+mr)*kcur], bpanel, c[ir*ldc+jr:], ldc)
		}
		jr += nr
	}
}

// packPixels gathers Col^T[p0:p1, pc:pc+kcur] of the source's image
// into mr-row micro-panels (packA's layout: per k, the panel's mr
// pixels), zero past p1 and for taps outside the data.
func (src convSource) packPixels(dst []float32, pc, kcur, p0, p1 int) {
	p := src.p
	x, xbase := src.x, src.base
	koff := p.koff[pc : pc+kcur]
	for q := p0; q < p1; q += mr {
		panel := dst[(q-p0)*kcur : (q-p0+mr)*kcur]
		n := min(mr, p1-q)
		pix := p.pixOff[q : q+n]
		maxOff := p.koffMax[pc+kcur-1]
		switch {
		case p.inRange && n == mr && pix[mr-1]-pix[0] == mr-1 && evenStep(pix, 1):
			// Six consecutive data elements per k (one 8-float copy
			// each, the two extra overwritten by the next k or landing
			// in the buffer's slack) when the data has the two extra.
			base := xbase + pix[0]
			if base+maxOff+8 <= len(x) && packPix6Contig(dst[(q-p0)*kcur:], x[base:], koff, maxOff) {
				break
			}
			for kk, ko := range koff {
				*(*[mr]float32)(panel[kk*mr:]) = *(*[mr]float32)(x[base+ko:])
			}
		case p.inRange && n == mr:
			// Across output rows or strided: six loads per k.
			var six [mr]int
			copy(six[:], pix)
			packPix6(panel, x[xbase:], koff, &six, maxOff, slices.Max(pix))
		default:
			p.gatherPanel(panel, x, xbase, pc, q, mr, koff, pix)
		}
	}
}

// transposeGo sets dst[i*ldd+j] = src[j*lds+i] for i < cols, j < rows.
func transposeGo(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	for i := range cols {
		d := dst[i*ldd : i*ldd+rows]
		for j := range d {
			d[j] = src[j*lds+i]
		}
	}
}
