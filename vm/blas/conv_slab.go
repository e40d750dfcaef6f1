package blas

// # Padding
//
// A convolution whose taps fall outside the data (padding) reads those
// taps as zero. The packers' fast gathers need every tap inside the data,
// so instead of a bounds check per element, each task first copies the
// rows its output pixels read into a zero-padded slab in the goroutine's
// scratch (the group's input channels over the taps' span, laid out
// densely), then gathers from the slab with the slab's plan, in which
// every tap is inside. The copy touches only the rows of the task's pixel
// block (along the outermost spatial axis), is cache-resident when the
// gather reads it, and replaces a padded copy of the whole input that a
// separate pad stage would write to memory and read back.

// convSource is where a task's packers gather from: plan p over data x,
// the image's (and group's) data starting at base.
type convSource struct {
	p    *ConvPlan
	x    []float32
	base int
}

// slabPlan returns the plan over the padded slab of p's geometry (nil
// when every tap is inside the data, or for the depthwise path, which
// clips its taps itself). The slab of one image and group is the group's
// input channels over the span each spatial axis's taps cover, from
// input coordinate -Pad, densely in (channel, spatial...) order.
func (p *ConvPlan) slabPlan() *ConvPlan {
	g := &p.geom
	if p.inRange || g.depthwise() || p.k == 0 || g.pixels() == 0 {
		return nil
	}
	sg := *g
	stride := 1
	for d := g.Spatial - 1; d >= 0; d-- {
		sg.In[d] = (g.Out[d]-1)*g.Stride[d] + (g.Kernel[d]-1)*g.Dilation[d] + 1
		sg.Pad[d] = 0
		sg.XS[d] = stride
		stride *= sg.In[d]
	}
	sg.XC = stride
	sg.XN = g.icg() * stride
	sp := NewConvPlan(&sg)
	if !sp.inRange || sp.pixelRows != p.pixelRows {
		return nil // cannot happen: the gathers' general path then reads p
	}
	return sp
}

// source returns where the task for pixels [p0, p1) of group grp of image
// n gathers from: the data itself when every tap is inside it, else the
// slab, filled with the rows those pixels read.
func (r *convRun) source(s *convScratch, n, grp, p0, p1 int) convSource {
	p := r.p
	g := &p.geom
	base := n*g.XN + grp*g.icg()*g.XC
	sp := p.slab
	if sp == nil {
		return convSource{p: p, x: r.x, base: base}
	}
	s.slab = growF32(s.slab, g.icg()*sp.geom.XC+packSlack)
	// The outermost axis's slab coordinates the pixels read.
	lo := sp.pixIn[p0][0]
	hi := sp.pixIn[p1-1][0] + (g.Kernel[0]-1)*g.Dilation[0] + 1
	p.fillSlab(s.slab, r.x, base, lo, hi)
	return convSource{p: sp, x: s.slab, base: 0}
}

// fillSlab writes the slab of the group whose data starts at x[base],
// for slab coordinates [lo, hi) along the outermost spatial axis (every
// coordinate of the others): slab element u is datum u - Pad, zero
// outside the data.
func (p *ConvPlan) fillSlab(slab, x []float32, base, lo, hi int) {
	g, sg := &p.geom, &p.slab.geom
	last := g.Spatial - 1
	span := sg.In[last]
	if g.Spatial == 2 && g.XS[1] == 1 {
		p.fillSlab2(slab, x, base, lo, hi)
		return
	}
	for c := range g.icg() {
		var u [3]int
		u[0] = lo
		for {
			// One line along the last axis at outer coordinates u[:last].
			inside := true
			src, dst := base+c*g.XC, c*sg.XC
			for a := range last {
				v := u[a] - g.Pad[a]
				if v < 0 || v >= g.In[a] {
					inside = false
				}
				src += v * g.XS[a]
				dst += u[a] * sg.XS[a]
			}
			a, b := 0, span
			if last == 0 {
				a, b = lo, hi
			}
			line := slab[dst : dst+span]
			if inside {
				fillLine(line, x, src, a, b, g.Pad[last], g.In[last], g.XS[last])
			} else {
				clear(line[a:b])
			}
			// Next line: the odometer over the outer axes, the outermost
			// bounded by hi.
			ax := last - 1
			for ; ax >= 0; ax-- {
				u[ax]++
				limit := sg.In[ax]
				if ax == 0 {
					limit = hi
				}
				if u[ax] < limit {
					break
				}
				u[ax] = 0
			}
			if ax < 0 {
				break
			}
		}
	}
}

// fillLine sets line[u] = x[src + (u-pad)*xs] for u in [a, b) where
// 0 <= u-pad < in, and zero elsewhere in [a, b).
func fillLine(line, x []float32, src, a, b, pad, in, xs int) {
	dlo, dhi := max(a, pad), min(b, in+pad) // the slab coordinates with data
	if dlo >= dhi {
		clear(line[a:b])
		return
	}
	clear(line[a:dlo])
	d := line[dlo:dhi]
	s := src + (dlo-pad)*xs
	if xs == 1 {
		copy(d, x[s:s+len(d)])
	} else {
		for j := range d {
			d[j] = x[s+j*xs]
		}
	}
	clear(line[dhi:b])
}

// fillSlab2 is fillSlab for two spatial axes with unit stride along
// rows (NCHW), the common case: per row one copy, the padding written
// inline (a call per short fill cost as much as the copy).
func (p *ConvPlan) fillSlab2(slab, x []float32, base, lo, hi int) {
	g, sg := &p.geom, &p.slab.geom
	span, pad := sg.In[1], g.Pad[1]
	dlo, dhi := max(0, pad), min(span, g.In[1]+pad) // the columns with data
	for c := range g.icg() {
		src, dst := base+c*g.XC, c*sg.XC
		for u := lo; u < hi; u++ {
			line := slab[dst+u*sg.XS[0] : dst+u*sg.XS[0]+span]
			v := u - g.Pad[0]
			if v < 0 || v >= g.In[0] || dlo >= dhi {
				clear(line)
				continue
			}
			for j := range dlo {
				line[j] = 0
			}
			s := src + v*g.XS[0] + dlo - pad
			copy(line[dlo:dhi], x[s:s+dhi-dlo])
			for j := dhi; j < span; j++ {
				line[j] = 0
			}
		}
	}
}
