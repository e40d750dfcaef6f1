package extern

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/blas"
)

// BLASKind is the kind of the modules transform's phasec_blas codegen
// writes.
const BLASKind = "phasec_blas"

// BLASModule is the payload of a phasec_blas module (JSON): one program per
// exported function.
type BLASModule struct {
	Functions []BLASFunction `json:"functions"`
}

// BLASFunction is one exported function: a straight-line program of GEMM
// steps over its parameters, its constants and earlier steps' results.
// Called in destination-passing style: Params inputs, then one output
// tensor per entry of Outputs, which the steps named there write.
type BLASFunction struct {
	Symbol    string         `json:"symbol"`
	Params    int            `json:"params"`
	Constants []BLASConstant `json:"constants,omitempty"`
	Steps     []BLASStep     `json:"steps"`
	// Outputs are the indices of the steps whose results the function
	// returns, in order.
	Outputs []int `json:"outputs"`
}

// BLASConstant is a float32 tensor baked into the program.
type BLASConstant struct {
	Shape []int64   `json:"shape"`
	Data  []float32 `json:"data"`
}

// BLASStep computes act(lhs @ op(rhs) + bias): lhs is [..., K] (its leading
// axes are the rows), rhs [K, N] or, with TransB, [N, K], bias [N] or
// absent; the result is [..., N]. Operands are references: "p<i>" the i-th
// parameter, "c<i>" the i-th constant, "s<i>" the result of step i < this
// one.
type BLASStep struct {
	LHS    string `json:"lhs"`
	RHS    string `json:"rhs"`
	TransB bool   `json:"trans_b,omitempty"`
	Bias   string `json:"bias,omitempty"`
	// Act is "", "relu", "gelu" (erf form) or "gelu_tanh".
	Act string `json:"act,omitempty"`
}

var blasActs = map[string]bool{"": true, "relu": true, "gelu": true, "gelu_tanh": true}

// ref is a decoded operand reference.
type ref struct {
	kind  byte // 'p', 'c' or 's'
	index int
}

func parseRef(s string, params, consts, step int) (ref, error) {
	if len(s) < 2 {
		return ref{}, fmt.Errorf("bad operand %q", s)
	}
	i, err := strconv.Atoi(s[1:])
	if err != nil || i < 0 {
		return ref{}, fmt.Errorf("bad operand %q", s)
	}
	limit := map[byte]int{'p': params, 'c': consts, 's': step}[s[0]]
	if _, ok := map[byte]bool{'p': true, 'c': true, 's': true}[s[0]]; !ok || i >= limit {
		return ref{}, fmt.Errorf("operand %q refers to nothing (%d parameters, %d constants, step %d)", s, params, consts, step)
	}
	return ref{s[0], i}, nil
}

type blasStep struct {
	lhs, rhs, bias ref
	hasBias        bool
	transB         bool
	act            string
}

func linkBLAS(m vm.ExternalModule) (map[string]vm.BuiltinFunc, error) {
	var mod BLASModule
	if err := json.Unmarshal(m.Payload, &mod); err != nil {
		return nil, fmt.Errorf("phasec_blas payload: %w", err)
	}
	fns := map[string]vm.BuiltinFunc{}
	for _, f := range mod.Functions {
		fn, err := compileBLASFunction(f)
		if err != nil {
			return nil, fmt.Errorf("phasec_blas function %s: %w", f.Symbol, err)
		}
		if _, dup := fns[f.Symbol]; dup {
			return nil, fmt.Errorf("phasec_blas function %s defined twice", f.Symbol)
		}
		fns[f.Symbol] = fn
	}
	return fns, nil
}

func compileBLASFunction(f BLASFunction) (vm.BuiltinFunc, error) {
	if f.Params < 0 || len(f.Steps) == 0 || len(f.Outputs) == 0 {
		return nil, errors.New("needs parameters, steps and outputs")
	}
	consts := make([]*tensor.Tensor, len(f.Constants))
	for i, c := range f.Constants {
		n := int64(1)
		for _, d := range c.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, fmt.Errorf("constant %d: bad shape %v", i, c.Shape)
			}
			n *= d
		}
		if n != int64(len(c.Data)) {
			return nil, fmt.Errorf("constant %d: shape %v holds %d values, got %d", i, c.Shape, n, len(c.Data))
		}
		t, err := tensor.NewChecked(tensor.Float32, c.Shape)
		if err != nil {
			return nil, fmt.Errorf("constant %d: %w", i, err)
		}
		copy(tensor.Data[float32](t), c.Data)
		consts[i] = t
	}
	steps := make([]blasStep, len(f.Steps))
	for i, s := range f.Steps {
		var err error
		st := &steps[i]
		if st.lhs, err = parseRef(s.LHS, f.Params, len(consts), i); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		if st.rhs, err = parseRef(s.RHS, f.Params, len(consts), i); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		if s.Bias != "" {
			if st.bias, err = parseRef(s.Bias, f.Params, len(consts), i); err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			st.hasBias = true
		}
		if !blasActs[s.Act] {
			return nil, fmt.Errorf("step %d: unknown activation %q", i, s.Act)
		}
		st.transB, st.act = s.TransB, s.Act
	}
	outOf := map[int]int{} // step -> output position (first)
	for k, s := range f.Outputs {
		if s < 0 || s >= len(steps) {
			return nil, fmt.Errorf("output %d names step %d of %d", k, s, len(steps))
		}
		if _, ok := outOf[s]; !ok {
			outOf[s] = k
		}
	}
	symbol, nparams, outputs := f.Symbol, f.Params, f.Outputs
	// scratch recycles the intermediate results of a call, one tensor per
	// step (the VM runs a function from several goroutines at once, so a
	// call takes a whole set and returns it).
	var scratch sync.Pool
	return func(_ *vm.Machine, args []vm.Value) (vm.Value, error) {
		if len(args) != nparams+len(outputs) {
			return vm.Value{}, fmt.Errorf("%s takes %d inputs and %d outputs, got %d arguments", symbol, nparams, len(outputs), len(args))
		}
		tensors := make([]*tensor.Tensor, len(args))
		for i, a := range args {
			t, ok := a.Tensor()
			if !ok || t.DType != tensor.Float32 {
				return vm.Value{}, fmt.Errorf("%s: argument %d must be a float32 tensor, got %s", symbol, i, a)
			}
			tensors[i] = t
		}
		results := make([]*tensor.Tensor, len(steps))
		kept, _ := scratch.Get().([]*tensor.Tensor)
		if len(kept) != len(steps) {
			kept = make([]*tensor.Tensor, len(steps))
		}
		defer scratch.Put(kept)
		get := func(r ref) *tensor.Tensor {
			switch r.kind {
			case 'p':
				return tensors[r.index]
			case 'c':
				return consts[r.index]
			}
			return results[r.index]
		}
		for i := range steps {
			st := &steps[i]
			var dst *tensor.Tensor
			if k, ok := outOf[i]; ok {
				dst = tensors[nparams+k]
			} else if shape, ok := stepShape(get(st.lhs), get(st.rhs), st.transB); ok {
				if kept[i] == nil || !equalShape(kept[i].Shape, shape) {
					kept[i], _ = tensor.NewChecked(tensor.Float32, shape) // nil on error: runGEMMStep allocates and reports
				}
				dst = kept[i]
			}
			var bias *tensor.Tensor
			if st.hasBias {
				bias = get(st.bias)
			}
			res, err := runGEMMStep(get(st.lhs), get(st.rhs), bias, st.transB, st.act, dst)
			if err != nil {
				return vm.Value{}, fmt.Errorf("%s: step %d: %w", symbol, i, err)
			}
			results[i] = res
		}
		for k, s := range outputs {
			if out := tensors[nparams+k]; results[s] != out {
				copy(tensor.Data[float32](out), tensor.Data[float32](results[s]))
			}
		}
		return vm.Null(), nil
	}, nil
}

// stepShape is the shape of a step's result, when its operands have the
// ranks a step takes.
func stepShape(lhs, rhs *tensor.Tensor, transB bool) ([]int64, bool) {
	if len(lhs.Shape) < 2 || len(rhs.Shape) != 2 {
		return nil, false
	}
	n := rhs.Shape[1]
	if transB {
		n = rhs.Shape[0]
	}
	return append(append([]int64(nil), lhs.Shape[:len(lhs.Shape)-1]...), n), true
}

// runGEMMStep computes act(lhs @ op(rhs) + bias) into dst (allocated when
// nil). The bias enters the GEMM itself: C starts as the bias rows and the
// product accumulates onto it (beta = 1); the activation then runs over C
// row by row.
func runGEMMStep(lhs, rhs, bias *tensor.Tensor, transB bool, act string, dst *tensor.Tensor) (*tensor.Tensor, error) {
	if len(lhs.Shape) < 2 || len(rhs.Shape) != 2 {
		return nil, fmt.Errorf("want lhs of rank >= 2 and a rank-2 rhs, got %s and %s", lhs, rhs)
	}
	k := int(lhs.Shape[len(lhs.Shape)-1])
	m := 1
	for _, d := range lhs.Shape[:len(lhs.Shape)-1] {
		m *= int(d)
	}
	rk, n := int(rhs.Shape[0]), int(rhs.Shape[1])
	ldb := n
	if transB {
		n, rk, ldb = rk, n, n
	}
	if rk != k {
		return nil, fmt.Errorf("inner dimensions differ: %s @ %s (trans_b=%v)", lhs, rhs, transB)
	}
	outShape := append(append([]int64(nil), lhs.Shape[:len(lhs.Shape)-1]...), int64(n))
	if dst == nil {
		var err error
		if dst, err = tensor.NewChecked(tensor.Float32, outShape); err != nil {
			return nil, err
		}
	} else if !equalShape(dst.Shape, outShape) {
		return nil, fmt.Errorf("output is %s, want float32%s", dst, tensor.FormatShape(outShape))
	}
	a, b, c := tensor.Data[float32](lhs), tensor.Data[float32](rhs), tensor.Data[float32](dst)
	var beta float32
	if bias != nil {
		if len(bias.Shape) != 1 || int(bias.Shape[0]) != n {
			return nil, fmt.Errorf("bias is %s, want float32(%d,)", bias, n)
		}
		bv := tensor.Data[float32](bias)
		for i := range m {
			copy(c[i*n:(i+1)*n], bv)
		}
		beta = 1
	}
	if err := blas.CheckSgemm(false, transB, m, n, k, len(a), max(k, 1), len(b), max(ldb, 1), len(c), max(n, 1)); err != nil {
		return nil, err
	}
	if m > 0 && n > 0 {
		blas.Sgemm(false, transB, m, n, k, 1, a, max(k, 1), b, max(ldb, 1), beta, c, max(n, 1))
	}
	applyActivation(act, c, n)
	return dst, nil
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// applyActivation applies act to c in place, a row of n at a time.
func applyActivation(act string, c []float32, n int) {
	if act == "" || n == 0 {
		return
	}
	for start := 0; start < len(c); start += n {
		row := c[start : start+n]
		switch act {
		case "relu":
			blas.MaxScalarF32(row, row, 0)
		case "gelu":
			for i, x := range row {
				row[i] = float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
			}
		case "gelu_tanh":
			for i, x := range row {
				v := float64(x)
				row[i] = float32(0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))))
			}
		}
	}
}
