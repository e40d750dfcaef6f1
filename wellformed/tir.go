package wellformed

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// The TIR rules are those of TVM's tir::VerifyWellFormed
// (src/tir/analysis/verify_well_formed.cc), which the TVMScript parser runs
// next to relax.analysis.well_formed:
//
//   - BlockVarAccessVerifier (WF040): inside a block with iteration
//     variables, a loop variable of a loop outside the block is not read;
//     the block sees it only through its iteration values.
//   - UndefinedVarVerifier (WF041): every variable is defined once (a
//     thread variable may be launched again) and used inside the scope of
//     its definition. Definitions are the parameters, the buffer_map (a
//     buffer's data and the bare variables of its shape), loops, lets,
//     block iteration variables, thread launches and allocations; a
//     buffer's shape elsewhere (alloc_buffer, decl_buffer) is a use. (Text
//     cannot bind one variable object twice; IR built by code can.)
//   - SingleEnvThreadVerifier (WF042): an environment thread ("threadIdx.x")
//     is launched through one variable in a PrimFunc.
//
// The walk recurses along statement nesting only; a SeqStmt's statements
// are iterated.

// tirChecker is the state of one PrimFunc's walk.
type tirChecker struct {
	c *checker
	// defined counts the active definitions of a variable (thread
	// variables may be launched again inside their own launch).
	defined map[*ir.PrimVar]int
	// everDefined: a variable defined anywhere before (TVM's
	// previously_defined_); threadVar: a launched thread variable, which
	// may be launched again.
	everDefined, threadVar, redefReported map[*ir.PrimVar]bool
	// loopBlockDepth is, for a loop variable in scope, the number of
	// enclosing blocks with iteration variables at its loop.
	loopBlockDepth map[*ir.PrimVar]int
	blocks         []*ir.Block // enclosing blocks with iteration variables
	envThreads     map[string]*ir.PrimVar
	reported       map[*ir.PrimVar]bool // undefined variables already reported
	leaked         map[leak]bool        // (loop variable, block) pairs already reported
	span           diag.Span            // the statement being checked
	// noLeakCheck: the expressions being checked are outside what
	// BlockVarAccessVerifier visits (iteration domains, allocated shapes).
	noLeakCheck bool
}

type leak struct {
	v     *ir.PrimVar
	block *ir.Block
}

// primFunc checks the TIR rules on f.
func (c *checker) primFunc(f *ir.PrimFunc) {
	if !c.on(ruleTIRUndefinedVar) {
		return
	}
	t := &tirChecker{
		c:              c,
		defined:        map[*ir.PrimVar]int{},
		everDefined:    map[*ir.PrimVar]bool{},
		threadVar:      map[*ir.PrimVar]bool{},
		redefReported:  map[*ir.PrimVar]bool{},
		loopBlockDepth: map[*ir.PrimVar]int{},
		envThreads:     map[string]*ir.PrimVar{},
		reported:       map[*ir.PrimVar]bool{},
		leaked:         map[leak]bool{},
		span:           spanOr(f.Span(), c.anchor),
	}
	c.anchor = t.span
	for _, p := range f.Params {
		t.define(p)
	}
	// The buffer_map defines each buffer's data and, unless defined
	// already, the bare variables of its shape; only then are the buffers'
	// shapes used (so A: (n * 2,) may follow B: (n,)).
	for _, p := range f.Params {
		if b := f.BufferMap[p]; b != nil {
			t.define(b.Data)
			for _, d := range b.Shape {
				if v, ok := d.(*ir.PrimVar); ok && t.defined[v] == 0 {
					t.define(v)
				}
			}
		}
	}
	for _, p := range f.Params {
		if b := f.BufferMap[p]; b != nil {
			t.bufferUse(b)
		}
	}
	t.stmt(f.Body)
}

func (t *tirChecker) define(v *ir.PrimVar) {
	if v == nil {
		return
	}
	if t.everDefined[v] && !t.threadVar[v] && !t.redefReported[v] {
		t.redefReported[v] = true
		t.c.report(ruleTIRUndefinedVar, t.span, "TIR variable %s is defined more than once in %s", v.Name, t.c.fnName)
	}
	t.everDefined[v] = true
	t.defined[v]++
}

func (t *tirChecker) undefine(v *ir.PrimVar) {
	if v != nil {
		t.defined[v]--
	}
}

// bufferUse checks a buffer declared outside the buffer_map: its data
// handle and shape are uses.
func (t *tirChecker) bufferUse(b *ir.Buffer) {
	if b == nil {
		return
	}
	if b.Data != nil {
		t.prim(b.Data)
	}
	t.prims(b.Shape)
}

func (t *tirChecker) prims(es []ir.PrimExpr) {
	for _, e := range es {
		t.prim(e)
	}
}

// scoped checks body with v defined.
func (t *tirChecker) scoped(v *ir.PrimVar, body ir.Stmt) {
	t.define(v)
	t.stmt(body)
	t.undefine(v)
}

// prim checks the variables e reads.
func (t *tirChecker) prim(e ir.PrimExpr) {
	ir.InspectPrim(e, func(x ir.PrimExpr) bool {
		v, ok := x.(*ir.PrimVar)
		if !ok {
			return true
		}
		if t.defined[v] <= 0 {
			if !t.reported[v] {
				t.reported[v] = true
				t.c.report(ruleTIRUndefinedVar, t.span, "TIR variable %s is used outside the scope of any definition in %s", v.Name, t.c.fnName)
			}
			return true
		}
		if depth, isLoop := t.loopBlockDepth[v]; isLoop && depth < len(t.blocks) && !t.noLeakCheck {
			b := t.blocks[len(t.blocks)-1]
			if k := (leak{v, b}); !t.leaked[k] {
				t.leaked[k] = true
				t.c.report(ruleTIRLoopVarInBlock, t.span, "loop variable %s of a loop outside block %q is used inside it; the block sees it only through its iteration values", v.Name, b.Name)
			}
		}
		return true
	})
}

func (t *tirChecker) region(r ir.BufferRegion) {
	for _, rg := range r.Region {
		t.prim(rg.Min)
		t.prim(rg.Extent)
	}
}

func (t *tirChecker) at(s ir.Stmt) {
	if sp := s.Span(); sp.IsValid() {
		t.span = sp
	}
}

func (t *tirChecker) stmt(s ir.Stmt) {
	if s == nil {
		return
	}
	saved := t.span
	defer func() { t.span = saved }()
	t.at(s)
	switch s := s.(type) {
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			t.stmt(x)
		}
	case *ir.For:
		t.prim(s.Min)
		t.prim(s.Extent)
		t.define(s.Var)
		prev, had := t.loopBlockDepth[s.Var]
		t.loopBlockDepth[s.Var] = len(t.blocks)
		t.stmt(s.Body)
		if had {
			t.loopBlockDepth[s.Var] = prev
		} else {
			delete(t.loopBlockDepth, s.Var)
		}
		t.undefine(s.Var)
	case *ir.BufferStore:
		t.prims(s.Indices)
		t.prim(s.Value)
	case *ir.IfThenElse:
		t.prim(s.Cond)
		t.stmt(s.Then)
		t.stmt(s.Else)
	case *ir.LetStmt:
		t.prim(s.Value)
		t.scoped(s.Var, s.Body)
	case *ir.AttrStmt:
		t.prim(s.Value)
		if s.Thread == nil {
			t.prim(s.Node)
			t.stmt(s.Body)
			return
		}
		if prev, ok := t.envThreads[s.Tag]; ok && prev != s.Thread {
			t.c.report(ruleTIREnvThread, t.span, "environment thread %s is launched through variable %s and again through another variable %s in %s",
				s.Tag, prev.Name, s.Thread.Name, t.c.fnName)
		} else if !ok {
			t.envThreads[s.Tag] = s.Thread
		}
		t.threadVar[s.Thread] = true
		t.scoped(s.Thread, s.Body)
	case *ir.Evaluate:
		t.prim(s.Value)
	case *ir.While:
		t.prim(s.Cond)
		t.stmt(s.Body)
	case *ir.Allocate:
		t.prims(s.Extents)
		t.prim(s.Condition)
		t.scoped(s.Data, s.Body)
	case *ir.AllocateConst:
		t.prims(s.Extents)
		t.scoped(s.Data, s.Body)
	case *ir.DeclBuffer:
		t.bufferUse(s.Buffer)
		t.stmt(s.Body)
	case *ir.BlockRealize:
		t.prims(s.IterValues)
		t.prim(s.Predicate)
		t.block(s.Block)
	case *ir.Block:
		t.block(s)
	default:
		if body, ok := ir.ScopeBody(s); ok {
			t.stmt(body)
		}
	}
}

func (t *tirChecker) block(b *ir.Block) {
	if b == nil {
		return
	}
	t.at(b)
	t.noLeakCheck = true
	for _, iv := range b.IterVars {
		if iv != nil {
			t.prim(iv.Dom.Min)
			t.prim(iv.Dom.Extent)
		}
	}
	t.noLeakCheck = false
	if len(b.IterVars) > 0 {
		t.blocks = append(t.blocks, b)
	}
	for _, iv := range b.IterVars {
		if iv != nil {
			t.define(iv.Var)
		}
	}
	for _, r := range b.Reads {
		t.region(r)
	}
	for _, r := range b.Writes {
		t.region(r)
	}
	for _, buf := range b.AllocBuffers {
		if buf != nil {
			t.define(buf.Data)
		}
	}
	t.noLeakCheck = true
	for _, buf := range b.AllocBuffers {
		t.bufferUse(buf)
	}
	t.noLeakCheck = false
	t.stmt(b.Init)
	t.stmt(b.Body)
	for _, buf := range b.AllocBuffers {
		if buf != nil {
			t.undefine(buf.Data)
		}
	}
	for _, iv := range b.IterVars {
		if iv != nil {
			t.undefine(iv.Var)
		}
	}
	if len(b.IterVars) > 0 {
		t.blocks = t.blocks[:len(t.blocks)-1]
	}
}
