package kernel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Schedules for the general path (TVM's MetaSchedule traces, at phasec's
// scale). Without a schedule the general path makes fixed choices: the
// loops run in the written order except that reorderNest moves the loop
// indexing the output's last dimension innermost, the innermost loop runs
// in vector mode when its body allows, and only T.parallel loops run on
// several cores. A Schedule replaces those choices for the perfect loop
// nests of one PrimFunc: the loop order, whether the innermost loop runs in
// vector mode, a tiling of the two innermost loops and one loop run in
// parallel. It is plain data (JSON), so a tuner can search over schedules,
// a database can store them (vm/kernel/tunedb) and an executable can carry
// one in its kernel's TIR (ScheduleAttr).
//
// Invariants. A schedule only changes nests around one block (TIR's block
// semantics make spatial iterations independent), so a scheduled kernel
// computes what the unscheduled one does; the arithmetic of each output
// element is unchanged (results are bit-identical) unless the schedule
// changes the relative order of the reduction loops or tiles two
// reduction loops, which ReordersReduction reports: then floating-point
// sums are reassociated, within the usual error bound of a reordered sum
// (n·eps·Σ|terms| for n terms). A schedule that does not fit the PrimFunc
// (another nest count, a loop that is not a permutation, a parallel
// reduction loop) is a compile error, never a wrong kernel.

// ScheduleAttr is the PrimFunc attribute that carries a schedule (its
// JSON text) in an executable's TIR, so the loader compiles the kernel
// with it.
const ScheduleAttr = "phasec.schedule"

// Schedule is the general path's choices for one PrimFunc: one entry per
// loop nest, in the order Nests lists them; a nil entry keeps the default
// choices for that nest.
type Schedule struct {
	Nests []*NestSchedule `json:"nests"`
}

// NestSchedule is the choices for one perfect loop nest. Loops are
// numbered by their position in the written nest, outermost 0.
type NestSchedule struct {
	// Order lists the loops, outermost first: a permutation of 0..n-1.
	Order []int `json:"order"`
	// Vector runs the innermost loop (the last of Order, or its inner
	// tile) in vector mode when its body allows; false runs it scalar.
	Vector bool `json:"vector"`
	// Tile, when set, splits the two innermost loops of Order into tiles
	// of Tile[0] × Tile[1] iterations: their tile loops run outside both
	// (the last tiles may be partial).
	Tile []int64 `json:"tile,omitempty"`
	// Parallel is the position in Order of the loop that runs split
	// across cores, or -1 for none. It must be a spatial loop and not a
	// tiled one.
	Parallel int `json:"parallel"`
}

// NestInfo describes one loop nest of a PrimFunc as a schedule sees it.
type NestInfo struct {
	// Depth is the number of loops of the perfect nest.
	Depth int
	// Reduce tells, per loop, whether it drives a reduction iteration
	// variable (its order against other reduction loops is arithmetic).
	Reduce []bool
	// CanParallel tells, per loop, whether it may run in parallel.
	CanParallel []bool
	// Extent is each loop's constant extent, or -1 when symbolic.
	Extent []int64
	// NotSchedulable says why a schedule cannot change this nest ("" when
	// it can).
	NotSchedulable string
}

// nestPlan is a schedulable nest's loops and block.
type nestPlan struct {
	loops   []*ir.For
	realize *ir.BlockRealize
	info    NestInfo
}

// Nests lists f's loop nests in pre-order: every loop that is not the
// whole body of its enclosing loop starts one. Schedule.Nests addresses
// them by this index.
func Nests(f *ir.PrimFunc) []NestInfo {
	plans := nestPlans(f)
	out := make([]NestInfo, len(plans))
	for i, p := range plans {
		out[i] = p.info
	}
	return out
}

func nestPlans(f *ir.PrimFunc) []*nestPlan {
	inner := map[*ir.For]bool{}
	var plans []*nestPlan
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		fo, ok := s.(*ir.For)
		if !ok || inner[fo] {
			return true
		}
		p := planNest(fo)
		for _, l := range p.loops[1:] {
			inner[l] = true
		}
		plans = append(plans, p)
		return true
	}})
	return plans
}

// planNest analyses the perfect nest rooted at root.
func planNest(root *ir.For) *nestPlan {
	p := &nestPlan{}
	var body ir.Stmt = root
	for {
		fo, ok := body.(*ir.For)
		if !ok {
			break
		}
		p.loops = append(p.loops, fo)
		body = fo.Body
	}
	n := len(p.loops)
	p.info = NestInfo{Depth: n, Reduce: make([]bool, n), CanParallel: make([]bool, n), Extent: make([]int64, n)}
	for i, l := range p.loops {
		p.info.Extent[i] = -1
		if k, ok := constI(l.Extent); ok {
			p.info.Extent[i] = k
		}
	}
	p.info.NotSchedulable = p.analyse(body)
	return p
}

// analyse checks that the nest may be rescheduled and classifies its
// loops; it returns why not, or "".
func (p *nestPlan) analyse(body ir.Stmt) string {
	r, ok := body.(*ir.BlockRealize)
	if !ok {
		return "the nest's body is not one block"
	}
	blk := r.Block
	if len(blk.AllocBuffers) > 0 || len(blk.MatchBuffers) > 0 || len(r.IterValues) != len(blk.IterVars) {
		return "the block allocates or matches buffers"
	}
	if containsLoop(blk.Body) || containsLoop(blk.Init) {
		return "the block has loops inside"
	}
	for _, l := range p.loops {
		switch l.Kind {
		case ir.ForSerial, ir.ForUnrolled, ir.ForVectorized:
		default:
			return "a loop is parallel or bound to a thread"
		}
		for _, g := range p.loops {
			if mentions(l.Min, g.Var) || mentions(l.Extent, g.Var) {
				return "a loop bound depends on another loop"
			}
		}
	}
	p.realize = r
	for li, l := range p.loops {
		used := false
		for i, iv := range blk.IterVars {
			if mentions(r.IterValues[i], l.Var) {
				used = true
				if iv.Kind != ir.IterSpatial {
					p.info.Reduce[li] = true
				}
			}
		}
		if !used {
			return fmt.Sprintf("loop %s drives no iteration variable", l.Var.Name)
		}
		p.info.CanParallel[li] = !p.info.Reduce[li] && p.ownsStores(l)
	}
	return ""
}

// ownsStores reports whether every store of the block indexes its buffer
// with the iteration variable that loop l alone drives (l plus a
// constant), so distinct iterations of l write distinct elements.
func (p *nestPlan) ownsStores(l *ir.For) bool {
	r := p.realize
	var own []*ir.PrimVar
	for i, iv := range r.Block.IterVars {
		if shiftOf(r.IterValues[i], l.Var) {
			own = append(own, iv.Var)
		}
	}
	if len(own) == 0 {
		return false
	}
	ok := true
	check := func(s ir.Stmt) {
		ir.WalkStmt(s, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
			st, isStore := s.(*ir.BufferStore)
			if isStore && !slices.ContainsFunc(st.Indices, func(e ir.PrimExpr) bool {
				v, isVar := e.(*ir.PrimVar)
				return isVar && slices.Contains(own, v)
			}) {
				ok = false
			}
			return true
		}})
	}
	check(r.Block.Body)
	check(r.Block.Init)
	return ok
}

// shiftOf reports whether e is v or v plus a constant.
func shiftOf(e ir.PrimExpr, v *ir.PrimVar) bool {
	if e == ir.PrimExpr(v) {
		return true
	}
	b, ok := e.(*ir.Binary)
	if !ok || b.Op != ir.OpAdd {
		return false
	}
	_, ca := constI(b.A)
	_, cb := constI(b.B)
	return (b.A == ir.PrimExpr(v) && cb) || (b.B == ir.PrimExpr(v) && ca)
}

// ParseSchedule decodes a schedule's JSON text (its fit to a PrimFunc is
// checked by Validate).
func ParseSchedule(data []byte) (*Schedule, error) {
	var s Schedule
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return &s, nil
}

// String is the schedule's JSON text.
func (s *Schedule) String() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data always marshals
	}
	return string(b)
}

// ScheduleOf returns the schedule f carries in ScheduleAttr, or nil.
func ScheduleOf(f *ir.PrimFunc) (*Schedule, error) {
	v, ok := f.Attrs[ScheduleAttr]
	if !ok {
		return nil, nil
	}
	text, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("attribute %s is a %T, not a string", ScheduleAttr, v)
	}
	s, err := ParseSchedule([]byte(text))
	if err != nil {
		return nil, err
	}
	if err := s.Validate(f); err != nil {
		return nil, err
	}
	return s, nil
}

// WithSchedule returns a copy of f that carries s (nil: no schedule).
func WithSchedule(f *ir.PrimFunc, s *Schedule) *ir.PrimFunc {
	g := *f
	if s == nil {
		g.Attrs = f.Attrs.Without(ScheduleAttr)
	} else {
		g.Attrs = f.Attrs.With(ScheduleAttr, s.String())
	}
	return &g
}

// Validate checks that s fits f.
func (s *Schedule) Validate(f *ir.PrimFunc) error {
	_, err := s.plan(f)
	return err
}

func (s *Schedule) plan(f *ir.PrimFunc) ([]*nestPlan, error) {
	plans := nestPlans(f)
	if len(s.Nests) != len(plans) {
		return nil, fmt.Errorf("schedule: %d nest entries for a PrimFunc with %d loop nests", len(s.Nests), len(plans))
	}
	for i, ns := range s.Nests {
		if ns == nil {
			continue
		}
		if err := ns.validate(plans[i].info); err != nil {
			return nil, fmt.Errorf("schedule: nest %d: %w", i, err)
		}
	}
	return plans, nil
}

func (ns *NestSchedule) validate(info NestInfo) error {
	if info.NotSchedulable != "" {
		return fmt.Errorf("cannot be scheduled: %s", info.NotSchedulable)
	}
	n := info.Depth
	if len(ns.Order) != n {
		return fmt.Errorf("order %v has %d loops, the nest %d", ns.Order, len(ns.Order), n)
	}
	seen := make([]bool, n)
	for _, l := range ns.Order {
		if l < 0 || l >= n || seen[l] {
			return fmt.Errorf("order %v is not a permutation of 0..%d", ns.Order, n-1)
		}
		seen[l] = true
	}
	if ns.Parallel < -1 || ns.Parallel >= n {
		return fmt.Errorf("parallel position %d out of range [-1, %d)", ns.Parallel, n)
	}
	if ns.Parallel >= 0 && !info.CanParallel[ns.Order[ns.Parallel]] {
		return fmt.Errorf("loop %d cannot run in parallel (a reduction loop, or iterations may write the same element)", ns.Order[ns.Parallel])
	}
	if ns.Tile != nil {
		if len(ns.Tile) != 2 || ns.Tile[0] < 1 || ns.Tile[1] < 1 {
			return fmt.Errorf("tile %v: want two sizes >= 1", ns.Tile)
		}
		if n < 2 {
			return fmt.Errorf("tile needs two loops, the nest has %d", n)
		}
		if ns.Parallel >= n-2 {
			return fmt.Errorf("the parallel loop cannot be a tiled one")
		}
	}
	return nil
}

// ReordersReduction reports whether s changes the order in which some
// output element's reduction terms are combined (then results agree with
// the unscheduled kernel only within rounding).
func (s *Schedule) ReordersReduction(f *ir.PrimFunc) bool {
	plans := nestPlans(f)
	for i, ns := range s.Nests {
		if ns == nil || i >= len(plans) {
			continue
		}
		red := plans[i].info.Reduce
		last := -1
		for _, l := range ns.Order {
			if red[l] {
				if l < last {
					return true
				}
				last = l
			}
		}
		n := len(ns.Order)
		if ns.Tile != nil && n >= 2 && red[ns.Order[n-2]] && red[ns.Order[n-1]] {
			return true
		}
	}
	return false
}

// loopMark records what a schedule decided for a loop the compiler meets.
type loopMark uint8

const (
	markFixed  loopMark = 1 << iota // keep the order: no reorderNest
	markScalar                      // no vector mode
)

// useSchedule validates s against the PrimFunc and records the rewritten
// nests compileFor substitutes for the written ones.
func (c *compiler) useSchedule(s *Schedule) {
	plans, err := s.plan(c.f)
	if err != nil {
		c.fail(c.f, "%v", err)
	}
	c.scheduled = map[*ir.For]*ir.For{}
	c.marks = map[*ir.For]loopMark{}
	for i, ns := range s.Nests {
		if ns != nil {
			c.scheduled[plans[i].loops[0]] = c.rewriteNest(plans[i], ns)
		}
	}
}

// scheduledLoop returns the loop to compile for s (its scheduled rewrite
// when s starts a scheduled nest) and the marks of the result.
func (c *compiler) scheduledLoop(s *ir.For) (*ir.For, loopMark) {
	if r, ok := c.scheduled[s]; ok {
		s = r
	}
	return s, c.marks[s]
}

// rewriteNest builds the loops of the scheduled nest around the same
// block. Tiled loops keep their variables: the inner loop of a tiled
// loop l runs l from min + t·size over min(size, extent - t·size)
// iterations, inside the tile loop t, so the block's bindings are
// unchanged.
func (c *compiler) rewriteNest(p *nestPlan, ns *NestSchedule) *ir.For {
	n := len(p.loops)
	var order []*ir.For
	for pos, li := range ns.Order {
		l := *p.loops[li]
		if pos == ns.Parallel {
			l.Kind = ir.ForParallel
		} else if l.Kind == ir.ForParallel {
			l.Kind = ir.ForSerial
		}
		order = append(order, &l)
	}
	if ns.Tile != nil {
		a, b := order[n-2], order[n-1]
		ta, a2 := tileLoop(a, ns.Tile[0])
		tb, b2 := tileLoop(b, ns.Tile[1])
		order = append(order[:n-2], ta, tb, a2, b2)
	}
	var body ir.Stmt = p.realize
	for i := len(order) - 1; i >= 0; i-- {
		order[i].Body = body
		body = order[i]
		c.marks[order[i]] = markFixed
	}
	if !ns.Vector {
		c.marks[order[len(order)-1]] |= markScalar
	}
	return order[0]
}

// tileLoop splits l into a tile loop over ceil(extent/size) tiles and the
// loop over one tile (l's variable).
func tileLoop(l *ir.For, size int64) (tile, inner *ir.For) {
	t := l.Var.Type
	k := func(v int64) ir.PrimExpr { return ir.NewInt(t, v) }
	tv := ir.NewPrimVar(l.Var.Name+"_tile", t)
	ext := l.Extent
	if ext.DType() != t {
		ext = &ir.Cast{Type: t, Value: ext}
	}
	lo := l.Min
	if lo.DType() != t {
		lo = &ir.Cast{Type: t, Value: lo}
	}
	tile = &ir.For{Var: tv, Min: k(0), Extent: ir.FloorDiv(ir.Add(ext, k(size-1)), k(size)), Kind: ir.ForSerial}
	start := ir.Mul(tv, k(size))
	in := *l
	in.Min = ir.Add(lo, start)
	in.Extent = ir.Min(k(size), ir.Sub(ext, start))
	return tile, &in
}
