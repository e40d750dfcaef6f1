package kernel

import (
	"strings"
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Fused producer + epilogue runs (epilogue.go): compileEpilogueTop finds
// them among a PrimFunc's top-level statements; a GEMM run executes as
// blas.SgemmEpilogue with a gemmEpState finishing its tiles, a
// convolution run as blas.Conv with a convEpState finishing its rows
// (epilogue_conv.go). Each run keeps the unfused dispatch of its
// statements (the producer's and the epilogue nests' own fast paths, or
// their general closures) for calls whose shapes the fused path does not
// take.

// epilogueFusion is off only in benchmarks that time the unfused
// dispatch of the same PrimFunc (epilogue_export_test.go).
var epilogueFusion = true

// compileEpilogueTop compiles the top-level statements when at least one
// producer + epilogue run is among them (ok false otherwise, and nothing
// is compiled); the statements between runs dispatch as compileTop does.
func (c *compiler) compileEpilogueTop(allocs stmt, stmts []ir.Stmt) (stmt, string, bool) {
	if c.noEpilogue || !epilogueFusion {
		return nil, "", false
	}
	var parts []stmt
	var names []string
	last := 0
	for i := 0; i < len(stmts); i++ {
		fused, name, end := c.fusedAt(stmts, i)
		if fused == nil {
			continue
		}
		if last < i {
			p, n := c.plainTop(stmts[last:i])
			parts, names = append(parts, p), append(names, n)
		}
		parts, names = append(parts, fused), append(names, name)
		last = end
		i = end - 1
	}
	if len(parts) == 0 {
		return nil, "", false
	}
	if last < len(stmts) {
		p, n := c.plainTop(stmts[last:])
		parts, names = append(parts, p), append(names, n)
	}
	return func(fr *frame) {
		if allocs != nil {
			allocs(fr)
		}
		for _, p := range parts {
			p(fr)
		}
	}, strings.Join(names, "+"), true
}

// plainTop compiles stmts with compileTop's dispatch, without epilogue
// fusion.
func (c *compiler) plainTop(stmts []ir.Stmt) (stmt, string) {
	saved := c.noEpilogue
	c.noEpilogue = true
	defer func() { c.noEpilogue = saved }()
	var body ir.Stmt = &ir.SeqStmt{Stmts: stmts}
	if len(stmts) == 1 {
		body = stmts[0]
	}
	return c.compileTop(body)
}

// fusedAt compiles the producer + epilogue run starting at stmts[i]: a
// matmul or convolution nest followed by its epilogue nests. It returns
// the run's statement, pattern name and end (nil when there is none).
func (c *compiler) fusedAt(stmts []ir.Stmt, i int) (stmt, string, int) {
	if run, name, end := c.paddedConvAt(stmts, i); run != nil { // epilogue_conv.go
		return run, name, end
	}
	n, ok := nestOf(stmts[i])
	if !ok || i+1 >= len(stmts) {
		return nil, "", 0
	}
	// The nest's variables get their slots first, as in compileRowTop.
	for _, v := range n.vars {
		if !isFloatType(v.Type) && !v.Type.IsHandle() && v.Type.Lanes == 1 {
			c.defineVar(v)
		}
	}
	st, ok := n.body.(*ir.BufferStore)
	if !ok {
		return nil, "", 0
	}
	var (
		prog *epProgram
		k    int
		run  fastPath
		name string
	)
	if cm, cname := c.convPlan(n); cm != nil {
		cols := make([]int, cm.spatial)
		copy(cols, cm.yS[:cm.spatial])
		if prog, k = c.compileEpilogue(st.Buffer, len(st.Indices), cols, stmts[i+1:]); prog != nil {
			ce := newConvEpilogue(cm, prog) // epilogue_conv.go
			run, name = ce.run, cname
		}
	} else if m, mname := c.matmulPlan(n); m != nil {
		if prog, k = c.compileEpilogue(st.Buffer, m.cRank, []int{m.cRank - 1}, stmts[i+1:]); prog != nil {
			ge := &gemmEpilogue{mm: m, prog: prog}
			ge.states.New = func() any { return &gemmEpState{ge: ge} }
			run, name = ge.run, mname
		}
	}
	if run == nil {
		return nil, "", 0
	}
	end := i + 1 + k
	unfused, _ := c.plainTop(stmts[i:end])
	return fastOr(run, unfused), name + "+epilogue", end
}

// gemmEpilogue is a matmul whose output runs through an epilogue program.
type gemmEpilogue struct {
	mm     *matmul
	prog   *epProgram
	states sync.Pool // *gemmEpState
}

// run executes the fused run: the GEMM accumulates in the output (in the
// producer's intermediate when the epilogue also reads the output) and
// every finished tile goes through the program.
func (ge *gemmEpilogue) run(fr *frame) bool {
	s := ge.states.Get().(*gemmEpState)
	defer ge.states.Put(s)
	s.fr = fr
	target := ge.prog.out
	if ge.prog.readsOut {
		target = ge.mm.c
	}
	ok := ge.mm.exec(fr, target, s)
	s.fr, s.out = nil, nil
	for t := range s.perThread {
		s.perThread[t].out = nil
	}
	return ok
}

// gemmEpState is one call's epilogue state (pooled): the bound operands,
// the current batch's offsets and the threads' scratch.
type gemmEpState struct {
	ge      *gemmEpilogue
	fr      *frame
	binds   []epBind
	base    []int64 // per operand: the offset of the current batch
	consts  []float32
	threads []epThread
	out     []float32 // the output's current batch (readsOut only)
	rank    int
	// perThread holds each thread's batch when threads run different
	// batches (matmulBatches).
	perThread []gemmEpBatch
}

// start binds the call: shape is the producer's output shape (already
// checked against the loops), threads the GEMM's goroutines.
func (s *gemmEpState) start(fr *frame, shape []int64, threads int) bool {
	p := s.ge.prog
	out := &fr.bufs[p.out]
	if out.f32 == nil || len(out.shape) != len(shape) {
		return false
	}
	for d := range shape {
		if out.shape[d] != shape[d] {
			return false
		}
	}
	if !p.checkNests(fr, shape) {
		return false
	}
	if len(s.binds) < len(p.operands) {
		s.binds = make([]epBind, len(p.operands))
		s.base = make([]int64, len(p.operands))
	}
	if !p.bindOperands(fr, shape, s.binds) {
		return false
	}
	s.rank = len(shape)
	for o := range p.operands {
		// A vector operand is read along the row: unit stride (or a single
		// column).
		if p.operands[o].vec && s.binds[o].stride[s.rank-1] != 1 && shape[s.rank-1] != 1 {
			return false
		}
	}
	s.consts = p.evalConsts(fr, s.consts)
	if len(s.threads) < threads {
		s.threads = append(s.threads, make([]epThread, threads-len(s.threads))...)
	}
	for t := range threads {
		s.threads[t].prepare(p, s.consts)
	}
	return true
}

// batch sets the offsets of batch index bi (C's batch dimensions) whose
// matrix starts at element offC of the output.
func (s *gemmEpState) batch(bi []int64, offC int64) {
	s.out = s.setBatch(s.base, bi, offC)
}

// setBatch sets base to the operands' offsets of batch index bi and
// returns the output from batch offset offC on (readsOut only, else nil).
func (s *gemmEpState) setBatch(base []int64, bi []int64, offC int64) []float32 {
	for o := range s.ge.prog.operands {
		b := &s.binds[o]
		off := b.off
		for d, i := range bi {
			off += i * b.stride[d]
		}
		base[o] = off
	}
	if s.ge.prog.readsOut {
		return s.fr.bufs[s.ge.prog.out].f32[offC:]
	}
	return nil
}

// batchFor returns the epilogue of batch index bi (output offset offC) for
// thread tid of a batched matmul whose threads each run whole batches
// (matmulBatches): its own batch offsets, its own scratch
// (prepareBatches(threads) first, before the threads start).
func (s *gemmEpState) batchFor(tid int, bi []int64, offC int64) blas.Epilogue {
	b := &s.perThread[tid]
	b.out = s.setBatch(b.base, bi, offC)
	return b
}

// prepareBatches makes room for batchFor's threads 0..threads-1.
func (s *gemmEpState) prepareBatches(threads int) {
	for len(s.perThread) < threads {
		s.perThread = append(s.perThread, gemmEpBatch{})
	}
	for t := range threads {
		b := &s.perThread[t]
		if len(b.base) < len(s.ge.prog.operands) {
			b.base = make([]int64, len(s.ge.prog.operands))
		}
		b.s, b.tid = s, t
	}
}

// gemmEpBatch is one thread's batch of a gemmEpState whose threads run
// different batches.
type gemmEpBatch struct {
	s    *gemmEpState
	tid  int
	base []int64
	out  []float32
}

// Tile finishes a tile of the thread's batch (blas.Epilogue; the GEMM runs
// on one thread, so its tid is always 0).
func (b *gemmEpBatch) Tile(_ int, c []float32, ldc, i0, i1, j0, j1 int) {
	b.s.tile(b.tid, b.base, b.out, c, ldc, i0, i1, j0, j1)
}

// Tile finishes rows [i0, i1), columns [j0, j1) of the current batch's
// matrix c (blas.Epilogue).
func (s *gemmEpState) Tile(tid int, c []float32, ldc, i0, i1, j0, j1 int) {
	s.tile(tid, s.base, s.out, c, ldc, i0, i1, j0, j1)
}

// tile is Tile for the batch whose operand offsets are base and output
// outB (nil unless the program reads the output).
func (s *gemmEpState) tile(tid int, base []int64, outB []float32, c []float32, ldc, i0, i1, j0, j1 int) {
	p := s.ge.prog
	th := &s.threads[tid]
	iDim := s.rank - 2
	for i := i0; i < i1; i++ {
		for o := range p.operands {
			b := &s.binds[o]
			off := base[o] + int64(i)*b.stride[iDim]
			if p.operands[o].vec {
				th.rowOff[o] = off
			} else {
				th.sc[o] = b.data[off]
			}
		}
		for j := j0; j < j1; j += epWidth {
			w := min(epWidth, j1-j)
			for o := range p.operands {
				if p.operands[o].vec {
					th.vecs[o] = s.binds[o].data[th.rowOff[o]+int64(j):][:w]
				}
			}
			acc := c[i*ldc+j:][:w]
			out := acc
			if outB != nil {
				out = outB[i*ldc+j:][:w]
			}
			p.runRow(th, acc, out)
		}
	}
}
