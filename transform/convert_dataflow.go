package transform

import (
	"errors"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ConvertToDataflow is TVM's src/relax/transform/convert_dataflow.cc: each
// maximal run of dataflow bindings (values that are neither an If nor an
// impure call) in a plain block becomes a dataflow block, when it has at
// least min_size bindings or continues an existing dataflow block (a run
// just before or after a dataflow block joins it; an existing block is
// kept whatever its size). Runs inside If branches and local functions are
// converted too.
//
// TVM runs CanonicalizeBindings after the extraction, for one effect: a
// var bound in a dataflow block and used only inside that block becomes a
// dataflow var, so the block's outputs are exactly the vars used outside
// it (later blocks, the result, an If branch, a local function). This pass
// does that step itself (dataflowVars), for every dataflow block of the
// function as CanonicalizeBindings does; TVM's CanonicalizeBindings also
// folds trivial bindings, which this pass leaves to that pass.
var ConvertToDataflow = passes.Define(passes.Info{
	Name:     "ConvertToDataflow",
	Doc:      "turn runs of pure bindings into dataflow blocks, exposing only the vars used after them",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it regroups bindings into blocks and decides per binding value, which needs A-normal form",
	},
	Options: []passes.Option{{
		Name: "min_size", Type: passes.Int, Default: int64(2),
		Doc: "the fewest consecutive dataflow bindings that make a new dataflow block",
		Check: func(v any) error {
			if v.(int64) < 0 {
				return errors.New("want a count of bindings, 0 or more")
			}
			return nil
		},
	}},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	return ConvertFunctionToDataflow(mod, f, int(env.Options().Int("min_size"))), nil
}).InParallel())

// ConvertFunctionToDataflow is the work of ConvertToDataflow on one
// function of mod: f itself when nothing changes.
func ConvertFunctionToDataflow(mod *ir.Module, f *ir.Function, minSize int) *ir.Function {
	x := &extractor{mod: mod, minSize: minSize}
	m := &ir.Mutator{KeepStructInfo: true, PostExpr: x.seq}
	return dataflowVars(m.Function(f))
}

// extractor regroups the blocks of each SeqExpr (a Mutator PostExpr: inner
// scopes are done first).
type extractor struct {
	mod     *ir.Module
	minSize int
}

func (x *extractor) seq(e ir.Expr) ir.Expr {
	s, ok := e.(*ir.SeqExpr)
	if !ok {
		return e
	}
	var (
		blocks  []*ir.BindingBlock
		plain   []ir.Binding // bindings before the current run, for a plain block
		run     []ir.Binding // the current run of dataflow bindings
		input   *ir.BindingBlock
		changed bool
	)
	// flush ends the current run: its own dataflow block when long enough
	// or continuing an input dataflow block, else more plain bindings.
	flush := func() {
		if len(run) == 0 {
			return
		}
		if len(run) < x.minSize && input == nil {
			plain = append(plain, run...)
		} else {
			blocks = appendBlock(blocks, plain, false, nil)
			blocks = appendBlock(blocks, run, true, input)
			plain = nil
			changed = changed || input == nil || len(input.Bindings) != len(run)
		}
		run, input = nil, nil
	}
	for _, blk := range s.Blocks {
		if blk.Dataflow {
			run = append(run, blk.Bindings...)
			input = blk
			continue
		}
		for _, b := range blk.Bindings {
			if x.isDataflow(b) {
				run = append(run, b)
				continue
			}
			flush()
			plain = append(plain, b)
		}
	}
	flush()
	blocks = appendBlock(blocks, plain, false, nil)
	if !changed {
		return s
	}
	out := &ir.SeqExpr{Blocks: blocks, Body: s.Body}
	out.SetSpan(s.Span())
	out.SetStructInfo(s.StructInfo())
	return out
}

// isDataflow reports whether a binding may stand in a dataflow block: its
// value is neither an If nor an impure call.
func (x *extractor) isDataflow(b ir.Binding) bool {
	var value ir.Expr
	switch b := b.(type) {
	case *ir.VarBinding:
		value = b.Value
	case *ir.MatchCast:
		value = b.Value
	}
	switch v := value.(type) {
	case *ir.If:
		return false
	case *ir.Call:
		return !isImpureCall(x.mod, v)
	}
	return true
}

// appendBlock appends a block of binds (none: nothing), reusing from when
// it holds exactly those bindings.
func appendBlock(blocks []*ir.BindingBlock, binds []ir.Binding, dataflow bool, from *ir.BindingBlock) []*ir.BindingBlock {
	if len(binds) == 0 {
		return blocks
	}
	if from != nil && len(from.Bindings) == len(binds) {
		return append(blocks, from)
	}
	blk := &ir.BindingBlock{Bindings: binds, Dataflow: dataflow}
	if from != nil {
		blk.SetSpan(from.Span())
	}
	return append(blocks, blk)
}

// dataflowVars returns f with each plain var that is bound in a dataflow
// block and used only inside that block replaced by a dataflow var (the
// step of TVM's CanonicalizeBindings that ConvertToDataflow relies on), or
// f itself when there is none.
func dataflowVars(f *ir.Function) *ir.Function {
	u := &homeUses{home: map[*ir.Var]home{}, outside: map[*ir.Var]bool{}}
	u.function(f, 0)
	var local map[*ir.Var]bool
	for v := range u.home {
		if !u.outside[v] {
			if local == nil {
				local = map[*ir.Var]bool{}
			}
			local[v] = true
		}
	}
	if local == nil {
		return f
	}
	m := &ir.Mutator{
		KeepStructInfo: true,
		DefVar: func(v *ir.Var) *ir.Var {
			if !local[v] {
				return v
			}
			n := ir.NewDataflowVar(v.Name, v.StructInfo())
			n.SetSpan(v.Span())
			return n
		},
	}
	return m.Function(f)
}

// home is where a plain var bound in a dataflow block is defined.
type home struct {
	block *ir.BindingBlock
	depth int // nesting depth of the function defining it
}

// homeUses finds the plain vars bound in dataflow blocks (home) and those
// used outside their home block (outside): in a plain block, a result, an
// If condition, another dataflow block, or inside a local function (as a
// free var), as TVM's CanonicalizePlanner decides.
type homeUses struct {
	home    map[*ir.Var]home
	outside map[*ir.Var]bool
}

// define records the definition of v in block (nil: a plain block).
func (u *homeUses) define(v *ir.Var, block *ir.BindingBlock, depth int) {
	if block != nil && !v.Dataflow {
		u.home[v] = home{block: block, depth: depth}
	}
}

func (u *homeUses) function(f *ir.Function, depth int) {
	u.expr(f.Body, nil, depth+1)
}

// expr records the uses in e, which stands in block (nil: outside any
// dataflow block) of a function at depth.
func (u *homeUses) expr(e ir.Expr, block *ir.BindingBlock, depth int) {
	switch e := e.(type) {
	case *ir.Var:
		h, ok := u.home[e]
		if ok && (h.block != block || h.depth != depth) {
			u.outside[e] = true
		}
	case *ir.Tuple:
		for _, f := range e.Fields {
			u.expr(f, block, depth)
		}
	case *ir.TupleGetItem:
		u.expr(e.Tuple, block, depth)
	case *ir.Call:
		u.expr(e.Op, block, depth)
		for _, a := range e.Args {
			u.expr(a, block, depth)
		}
	case *ir.If:
		u.expr(e.Cond, block, depth)
		u.expr(e.Then, block, depth)
		u.expr(e.Else, block, depth)
	case *ir.SeqExpr:
		for _, blk := range e.Blocks {
			in := (*ir.BindingBlock)(nil)
			if blk.Dataflow {
				in = blk
			}
			for _, b := range blk.Bindings {
				var v *ir.Var
				var value ir.Expr
				switch b := b.(type) {
				case *ir.VarBinding:
					v, value = b.Var, b.Value
				case *ir.MatchCast:
					v, value = b.Var, b.Value
				}
				if _, isFunc := value.(*ir.Function); isFunc {
					u.define(v, in, depth) // a local function may call itself: a free use
					u.expr(value, in, depth)
					continue
				}
				u.expr(value, in, depth)
				u.define(v, in, depth)
			}
		}
		u.expr(e.Body, nil, depth) // a nested scope's result is outside any block
	case *ir.Function:
		u.function(e, depth)
	}
}
