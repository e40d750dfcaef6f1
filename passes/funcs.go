package passes

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/phasec/phasec/ir"
)

// runPerFunction applies a function-level pass to every function it targets
// and assembles the new module. Results are indexed by position in sorted
// name order and errors joined in that order, so a parallel run returns
// exactly what the sequential run returns. When no function changed it
// returns mod itself.
func runPerFunction(env *Env, p *Pass, mod *ir.Module) (*ir.Module, error) {
	var names []string
	var funcs []ir.BaseFunc
	for name, f := range mod.Functions() {
		switch f := f.(type) {
		case *ir.Function:
			if p.kind == KindPrimFunc {
				continue
			}
			if skip, _ := f.Attrs.Bool(ir.AttrSkipOptimize); skip {
				continue
			}
		case *ir.PrimFunc:
			if p.kind != KindPrimFunc {
				continue
			}
		default: // an extern function member has no body to transform
			continue
		}
		names = append(names, name)
		funcs = append(funcs, f)
	}
	out := make([]ir.BaseFunc, len(funcs))
	errs := make([]error, len(funcs))
	one := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = &panicError{value: r, stack: debug.Stack(), where: names[i]}
			}
		}()
		if err := env.Err(); err != nil {
			errs[i] = err
			return
		}
		switch p.kind {
		case KindFunction:
			nf, err := p.function(env, mod, names[i], funcs[i].(*ir.Function))
			out[i], errs[i] = nf, err
			if nf == nil && err == nil {
				errs[i] = fmt.Errorf("function %s: pass returned nil", names[i])
			}
		case KindPrimFunc:
			nf, err := p.primFunc(env, mod, names[i], funcs[i].(*ir.PrimFunc))
			out[i], errs[i] = nf, err
			if nf == nil && err == nil {
				errs[i] = fmt.Errorf("function %s: pass returned nil", names[i])
			}
		case KindDataflowBlock:
			out[i], errs[i] = mapDataflowBlocks(env, p, mod, names[i], funcs[i].(*ir.Function))
		}
	}
	workers := env.pc.Parallelism
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if !p.parallel || workers == 1 || len(funcs) < 2 {
		for i := range funcs {
			one(i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(funcs)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(funcs) {
						return
					}
					one(i)
				}
			}()
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		// A panic anywhere is reported as the pass's panic.
		for _, e := range errs {
			if pe, ok := e.(*panicError); ok {
				return nil, pe
			}
		}
		return nil, err
	}
	var res *ir.Module
	for i, f := range out {
		if f == funcs[i] {
			continue
		}
		if res == nil {
			res = mod.Clone()
		}
		res.Set(names[i], f)
	}
	if res == nil {
		return mod, nil
	}
	return res, nil
}

// panicError is a recovered panic inside a pass.
type panicError struct {
	value any
	stack []byte
	where string // function being transformed, if known
}

func (e *panicError) Error() string {
	if e.where != "" {
		return fmt.Sprintf("panic while transforming %s: %v", e.where, e.value)
	}
	return fmt.Sprintf("panic: %v", e.value)
}

// mapDataflowBlocks applies the pass to every dataflow block of f,
// including those in If branches and nested functions, copying only the
// path to changed blocks.
func mapDataflowBlocks(env *Env, p *Pass, mod *ir.Module, name string, f *ir.Function) (ir.BaseFunc, error) {
	m := blockMapper{env: env, p: p, mod: mod, name: name}
	nf := m.expr(f)
	if m.err != nil {
		return nil, m.err
	}
	return nf.(*ir.Function), nil
}

type blockMapper struct {
	env  *Env
	p    *Pass
	mod  *ir.Module
	name string
	err  error
}

// expr rewrites the scopes inside e; recursion follows expression nesting
// (functions, If branches), never the number of bindings.
func (m *blockMapper) expr(e ir.Expr) ir.Expr {
	if m.err != nil {
		return e
	}
	switch n := e.(type) {
	case *ir.Function:
		if b := m.expr(n.Body); b != n.Body {
			c := *n
			c.Body = b
			return &c
		}
	case *ir.If:
		t, f := m.expr(n.Then), m.expr(n.Else)
		if t != n.Then || f != n.Else {
			c := *n
			c.Then, c.Else = t, f
			return &c
		}
	case *ir.SeqExpr:
		var blocks []*ir.BindingBlock
		for i, b := range n.Blocks {
			nb := m.block(b)
			if m.err != nil {
				return e
			}
			if nb != b && blocks == nil {
				blocks = append(make([]*ir.BindingBlock, 0, len(n.Blocks)), n.Blocks[:i]...)
			}
			if blocks != nil {
				blocks = append(blocks, nb)
			}
		}
		if blocks != nil {
			c := *n
			c.Blocks = blocks
			return &c
		}
	}
	return e
}

func (m *blockMapper) block(b *ir.BindingBlock) *ir.BindingBlock {
	if b.Dataflow {
		outs := blockOutputs(b)
		sinfos := make([]ir.StructInfo, len(outs))
		for i, v := range outs {
			sinfos[i] = v.StructInfo()
		}
		nb, err := m.p.block(m.env, m.mod, m.name, b)
		if err != nil {
			m.err = fmt.Errorf("function %s: %w", m.name, err)
			return b
		}
		if nb == nil {
			m.err = fmt.Errorf("function %s: pass returned a nil block", m.name)
			return b
		}
		if err := sameInterface(outs, sinfos, nb); err != nil {
			m.err = fmt.Errorf("function %s: %w", m.name, err)
			return b
		}
		return nb
	}
	var bindings []ir.Binding
	for i, bind := range b.Bindings {
		nbind := bind
		if vb, ok := bind.(*ir.VarBinding); ok {
			if v := m.expr(vb.Value); v != vb.Value {
				c := *vb
				c.Value = v
				nbind = &c
			}
		}
		if nbind != bind && bindings == nil {
			bindings = append(make([]ir.Binding, 0, len(b.Bindings)), b.Bindings[:i]...)
		}
		if bindings != nil {
			bindings = append(bindings, nbind)
		}
	}
	if bindings == nil {
		return b
	}
	c := *b
	c.Bindings = bindings
	return &c
}

// sameInterface checks that a rewritten dataflow block binds the same
// output vars a, in order, with the struct info they had before (sinfos).
func sameInterface(a []*ir.Var, sinfos []ir.StructInfo, new *ir.BindingBlock) error {
	if !new.Dataflow {
		return fmt.Errorf("dataflow-block pass turned a dataflow block into a plain block")
	}
	b := blockOutputs(new)
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(b):
			return fmt.Errorf("dataflow-block pass removed output var %s", a[i].Name)
		case i >= len(a):
			return fmt.Errorf("dataflow-block pass added output var %s", b[i].Name)
		case a[i] != b[i]:
			return fmt.Errorf("dataflow-block pass replaced output var %s by %s", a[i].Name, b[i].Name)
		case sinfos[i] != b[i].StructInfo() && !ir.StructuralEqual(sinfos[i], b[i].StructInfo(), ir.EqualOptions{}):
			return fmt.Errorf("dataflow-block pass changed the struct info of output var %s", a[i].Name)
		}
	}
	return nil
}

// blockOutputs lists the non-dataflow vars a block binds.
func blockOutputs(b *ir.BindingBlock) []*ir.Var {
	var out []*ir.Var
	for _, bind := range b.Bindings {
		if v := bind.BoundVar(); v != nil && !v.Dataflow {
			out = append(out, v)
		}
	}
	return out
}
