package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"

	"github.com/spf13/pflag"
)

const importUsage = "[-o OUT.tvms] [--params PARAMS.npz | --keep-params-in-module] [--bind name=value.npy]... [--time] MODEL.onnx"

func init() {
	register(&command{
		name:    "import",
		summary: "import an ONNX model as a TVMScript module at phase Ingest (weights as parameters with an .npz, or constants)",
		usage:   importUsage,
		setup:   runImport,
	})
}

// runImport converts an ONNX model. By default the initializers of a
// floating-point type become parameters of main after its inputs
// (R.func_attr num_input), written to --params (default: OUT with .npz
// for .tvms); --keep-params-in-module makes them constants instead.
func runImport(fs *pflag.FlagSet) runFunc {
	out := fs.StringP("output", "o", "", "write the module to `OUT.tvms` (default stdout)")
	paramsPath := fs.String("params", "", "write the weights to `PARAMS.npz` (default: OUT.npz beside -o)")
	keep := fs.Bool("keep-params-in-module", false, "make the weights constants of the module instead of parameters")
	timing := fs.Bool("time", false, "print the read and import times (stderr)")
	var binds repeatFlag
	fs.Var(&binds, "bind", "fix graph input `name=value.npy` to a constant (a shape, axes or pads the model takes as an input), repeatable")
	return func(positional []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(positional) != 1 || *keep && *paramsPath != "" {
			fmt.Fprintf(stderr, "phasec import: want one MODEL.onnx, and --params or --keep-params-in-module, not both\nusage: phasec import %s\n", importUsage)
			return 2
		}
		t0 := time.Now()
		model, err := onnx.ReadFile(positional[0], onnx.DefaultLimits)
		if err != nil {
			fmt.Fprintf(stderr, "phasec import: %v\n", err)
			return 1
		}
		t1 := time.Now()
		bound := map[string]*ir.NDArray{}
		for _, kv := range binds {
			name, file, ok := strings.Cut(kv, "=")
			if !ok {
				fmt.Fprintf(stderr, "phasec import: --bind %q: want name=value.npy\n", kv)
				return 2
			}
			t, err := tensor.ReadNpyFile(file)
			if err != nil {
				fmt.Fprintf(stderr, "phasec import: --bind %s: %v\n", name, err)
				return 1
			}
			bound[name] = &ir.NDArray{DType: op.IRDType(t.DType), Shape: t.Shape, Data: t.Bytes()}
		}
		res, err := onnx.Import(model, onnx.Options{KeepParamsInModule: *keep, Bind: bound})
		if err != nil {
			printImportError(stderr, err)
			if name, ok := onnx.NeedsValue(err); ok {
				fmt.Fprintf(stderr, "phasec import: if %q is a graph input, --bind %s=value.npy fixes its value\n", name, name)
			}
			return 1
		}
		t2 := time.Now()
		w := stdout
		if *out != "" {
			f, err := os.Create(*out)
			if err != nil {
				fmt.Fprintf(stderr, "phasec import: %v\n", err)
				return 1
			}
			defer f.Close()
			w = f
		}
		if err := printer.Fprint(w, res.Module); err != nil {
			fmt.Fprintf(stderr, "phasec import: %v\n", err)
			return 1
		}
		if len(res.Params) > 0 {
			p := *paramsPath
			if p == "" && *out != "" {
				p = strings.TrimSuffix(*out, ".tvms") + ".npz"
			}
			if p == "" {
				fmt.Fprintf(stderr, "phasec import: the model has %d weights: give --params PARAMS.npz (or -o, or --keep-params-in-module)\n", len(res.Params))
				return 2
			}
			if err := onnx.WriteParamsFile(p, res.Params); err != nil {
				fmt.Fprintf(stderr, "phasec import: %v\n", err)
				return 1
			}
		}
		if *timing {
			fmt.Fprintf(stderr, "read %s, import %s (%d nodes)\n", fmtDur(t1.Sub(t0)), fmtDur(t2.Sub(t1)), len(model.Proto.GetGraph().GetNode()))
		}
		return 0
	}
}

func printImportError(stderr io.Writer, err error) {
	if l, ok := err.(diag.List); ok {
		for _, d := range l {
			fmt.Fprintf(stderr, "%s (at %s)\n", d, d.Path)
		}
		return
	}
	fmt.Fprintf(stderr, "phasec: %v\n", err)
}

// isONNX reports whether a command's FILE is an ONNX model.
func isONNX(path string) bool { return strings.HasSuffix(path, ".onnx") }

// importONNX reads and imports a model for run, build and eval, its
// weights as constants: the module then takes only the graph's inputs.
func importONNX(path string, stderr io.Writer) (*ir.Module, *onnx.Result, int) {
	model, err := onnx.ReadFile(path, onnx.DefaultLimits)
	if err != nil {
		fmt.Fprintf(stderr, "phasec: %v\n", err)
		return nil, nil, 1
	}
	res, err := onnx.Import(model, onnx.Options{KeepParamsInModule: true})
	if err != nil {
		printImportError(stderr, err)
		return nil, nil, 1
	}
	return res.Module, res, 0
}

// onnxInputName maps an --input name given as the ONNX graph input's
// name to main's parameter (the same unless the ONNX name is not an
// identifier).
func onnxInputName(res *onnx.Result, mod *ir.Module, name string) string {
	if res == nil {
		return name
	}
	f := mod.Func("main")
	for i, in := range res.Inputs {
		if in == name && f != nil && i < len(f.Params) {
			return f.Params[i].Name
		}
	}
	return name
}

// onnxOutputNames names a model's results by the graph's outputs.
func onnxOutputNames(res *onnx.Result, n int) []string {
	if res == nil || len(res.Outputs) != n {
		return nil
	}
	return res.Outputs
}
