package transform

import (
	"encoding/json"
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/extern"
)

// blasCodegen is the phasec_blas external codegen: each Codegen function
// (one composite call, or several merged by MergeCompositeFunctions)
// becomes a straight-line program of GEMM steps (vm/extern.BLASFunction),
// one step per composite call: act(lhs @ op(rhs) + bias) with the
// composite's permute_dims folded into trans_b. All functions of a
// compilation go into one module of kind vm/extern.BLASKind.
func blasCodegen(funcs []CodegenFunction, _ map[string]any) ([]ExternalModule, error) {
	mod := extern.BLASModule{}
	x := ExternalModule{Kind: extern.BLASKind}
	for _, f := range funcs {
		bf, err := compileBLASFunction(f)
		if err != nil {
			return nil, &CodegenError{Symbol: f.Symbol, Msg: err.Error()}
		}
		mod.Functions = append(mod.Functions, bf)
		x.Symbols = append(x.Symbols, f.Symbol)
	}
	payload, err := json.Marshal(mod)
	if err != nil {
		return nil, err
	}
	x.Payload = payload
	return []ExternalModule{x}, nil
}

// blasRefs names the values of a Codegen function's body for the program.
type blasRefs struct {
	prog  *extern.BLASFunction
	names map[*ir.Var]string // parameters and call results
}

func (r *blasRefs) operand(e ir.Expr) (string, error) {
	switch e := e.(type) {
	case *ir.Var:
		if n, ok := r.names[e]; ok {
			return n, nil
		}
		return "", fmt.Errorf("operand %s is neither a parameter nor a composite call's result", e.Name)
	case *ir.Constant:
		return r.constant(e)
	}
	return "", fmt.Errorf("operand %T is not supported", e)
}

func (r *blasRefs) constant(c *ir.Constant) (string, error) {
	if c.Data == nil || c.Data.DType.String() != "float32" {
		return "", fmt.Errorf("constant operands must be float32 tensors")
	}
	n := int(c.Data.NumElements())
	data := make([]float32, n)
	for i := range n {
		data[i] = float32(c.Data.Float(i))
	}
	r.prog.Constants = append(r.prog.Constants, extern.BLASConstant{Shape: c.Data.Shape, Data: data})
	return fmt.Sprintf("c%d", len(r.prog.Constants)-1), nil
}

func compileBLASFunction(cf CodegenFunction) (extern.BLASFunction, error) {
	prog := extern.BLASFunction{Symbol: cf.Symbol, Params: len(cf.Func.Params)}
	refs := &blasRefs{prog: &prog, names: map[*ir.Var]string{}}
	for i, p := range cf.Func.Params {
		refs.names[p] = fmt.Sprintf("p%d", i)
	}
	seq, ok := cf.Func.Body.(*ir.SeqExpr)
	if !ok {
		return prog, fmt.Errorf("body is not a SeqExpr")
	}
	locals := map[*ir.Var]*ir.Function{}
	stepOf := map[*ir.Var]int{}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			vb, ok := b.(*ir.VarBinding)
			if !ok {
				return prog, fmt.Errorf("unexpected match_cast of %s", b.BoundVar().Name)
			}
			switch v := vb.Value.(type) {
			case *ir.Function:
				locals[vb.Var] = v
				continue
			case *ir.Call:
				callee, _ := v.Op.(*ir.Var)
				comp := locals[callee]
				if comp == nil {
					return prog, fmt.Errorf("%s is not a call of a nested composite function", vb.Var.Name)
				}
				step, err := blasStep(comp, v.Args, refs)
				if err != nil {
					return prog, err
				}
				prog.Steps = append(prog.Steps, step)
				stepOf[vb.Var] = len(prog.Steps) - 1
				refs.names[vb.Var] = fmt.Sprintf("s%d", len(prog.Steps)-1)
				continue
			}
			return prog, fmt.Errorf("unexpected binding of %s", vb.Var.Name)
		}
	}
	results := []ir.Expr{seq.Body}
	if t, ok := seq.Body.(*ir.Tuple); ok {
		results = t.Fields
	}
	for _, r := range results {
		v, _ := r.(*ir.Var)
		s, ok := stepOf[v]
		if !ok {
			return prog, fmt.Errorf("the result must be composite calls' results")
		}
		prog.Outputs = append(prog.Outputs, s)
	}
	return prog, nil
}

// blasStep reads one composite function: [permute_dims(w)] matmul(x, w)
// [add(_, bias)] [relu|gelu|gelu_tanh], its parameters bound to args.
func blasStep(comp *ir.Function, args []ir.Expr, refs *blasRefs) (extern.BLASStep, error) {
	name, _ := comp.Attrs.String(AttrComposite)
	fail := func(format string, a ...any) (extern.BLASStep, error) {
		return extern.BLASStep{}, fmt.Errorf("composite %s: %s", name, fmt.Sprintf(format, a...))
	}
	if len(args) != len(comp.Params) {
		return fail("called with %d arguments for %d parameters", len(args), len(comp.Params))
	}
	arg := map[*ir.Var]ir.Expr{}
	for i, p := range comp.Params {
		arg[p] = args[i]
	}
	seq, ok := comp.Body.(*ir.SeqExpr)
	if !ok {
		return fail("body is not a SeqExpr")
	}
	var step extern.BLASStep
	transposed := map[*ir.Var]ir.Expr{} // permute_dims results -> their operand
	var last *ir.Var
	stage := 0 // 0: before matmul, 1: after matmul, 2: after bias, 3: after act
	operand := func(e ir.Expr) (string, error) {
		if v, ok := e.(*ir.Var); ok {
			if a, ok := arg[v]; ok {
				return refs.operand(a)
			}
		}
		return refs.operand(e)
	}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			vb, ok := b.(*ir.VarBinding)
			if !ok {
				return fail("unexpected match_cast")
			}
			c, ok := vb.Value.(*ir.Call)
			if !ok {
				return fail("binding %s is not an op call", vb.Var.Name)
			}
			o, _ := c.Op.(*ir.Op)
			if o == nil {
				return fail("binding %s is not an op call", vb.Var.Name)
			}
			var err error
			switch {
			case o.Name == "relax.permute_dims" && stage == 0:
				transposed[vb.Var] = c.Args[0]
			case o.Name == "relax.matmul" && stage == 0:
				if step.LHS, err = operand(c.Args[0]); err != nil {
					return fail("%v", err)
				}
				rhs := c.Args[1]
				if v, ok := rhs.(*ir.Var); ok && transposed[v] != nil {
					rhs, step.TransB = transposed[v], true
				}
				if step.RHS, err = operand(rhs); err != nil {
					return fail("%v", err)
				}
				stage = 1
			case o.Name == "relax.add" && stage == 1:
				if v, ok := c.Args[0].(*ir.Var); !ok || v != last {
					return fail("the bias add must take the product first")
				}
				if step.Bias, err = operand(c.Args[1]); err != nil {
					return fail("%v", err)
				}
				stage = 2
			case (o.Name == "relax.nn.relu" || o.Name == "relax.nn.gelu" || o.Name == "relax.nn.gelu_tanh") && (stage == 1 || stage == 2):
				if v, ok := c.Args[0].(*ir.Var); !ok || v != last {
					return fail("the activation must take the previous result")
				}
				step.Act = o.Name[len("relax.nn."):]
				stage = 3
			default:
				return fail("%s is not part of a GEMM with bias and activation", o.Name)
			}
			last = vb.Var
		}
	}
	if stage == 0 {
		return fail("no matmul")
	}
	if v, ok := seq.Body.(*ir.Var); !ok || v != last {
		return fail("the result must be the last binding")
	}
	return step, nil
}

func init() {
	if err := RegisterCodegen(BLASCodegen, blasCodegen); err != nil {
		panic(err)
	}
}
