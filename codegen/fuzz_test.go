package codegen

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/loader"
)

// FuzzBuild: whatever the parser accepts and the barriers take to phase
// build, code generation either reports diagnostics or produces an
// executable that survives the binary format and links (its kernels
// compile: Build compiled them already). Nothing panics.
func FuzzBuild(f *testing.F) {
	for _, pattern := range []string{"../testdata/lowered_*.tvms", "../testdata/models/*.tvms", "testdata/*.tvms"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if src, err := os.ReadFile(file); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		mod, diags := syntax.Parse("fuzz.tvms", src)
		if diags.HasErrors() || mod == nil {
			return
		}
		var err error
		for _, b := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
			if mod, err = b(mod); err != nil {
				return
			}
		}
		exe, diags := Build(mod)
		if diags != nil {
			require.True(t, diags.HasErrors(), "Build failed without an error diagnostic: %v", diags)
			return
		}
		back, err := vm.Unmarshal(exe.Marshal())
		require.NoError(t, err, "the executable does not survive the binary format")
		_, err = loader.Link(back, vm.Options{})
		require.NoError(t, err, "a built executable does not link")
	})
}

// stubKernel stands in for every kernel in FuzzModelExecutables: it checks
// that buffers are tensors and does nothing, so mutants run fast whatever
// shapes they make up.
type stubKernel struct{ params []abi.Param }

func (s stubKernel) Call(args []abi.Arg) error {
	if len(args) != len(s.params) {
		return fmt.Errorf("stub kernel: %d arguments for %d parameters", len(args), len(s.params))
	}
	for i, p := range s.params {
		if p.Kind == abi.ParamBuffer && args[i].T == nil {
			return fmt.Errorf("stub kernel: argument %d is not a tensor", i)
		}
	}
	return nil
}

// FuzzModelExecutables mutates the executables of the bundled models (the
// code VMShapeLower, the planner and codegen really produce: shape heaps,
// match_shape, storage, kills, closures, If) and runs every mutant that
// loads on inputs made from its recorded signatures: errors are fine,
// panics (even recovered ones) and hangs are not.
func FuzzModelExecutables(f *testing.F) {
	for _, path := range []string{"../testdata/models/mlp_legalized.tvms", "../testdata/models/transformer_block.tvms", "testdata/control_flow.tvms"} {
		mod := parseFile(f, path)
		var err error
		for _, b := range []func(*ir.Module) (*ir.Module, error){barrier.Canonicalize, barrier.Lower, barrier.Build} {
			mod, err = b(mod)
			require.NoError(f, err)
		}
		exe, diags := Build(mod)
		require.Nil(f, diags)
		data := exe.Marshal()
		f.Add(data, false)
		f.Add(data[24:], true)
	}
	f.Fuzz(func(t *testing.T, data []byte, sealed bool) {
		if sealed {
			data = seal(data)
		}
		exe, err := vm.Unmarshal(data)
		if err != nil {
			return
		}
		machine, err := vm.New(exe, vm.Options{
			CompileKernel: func(k vm.Kernel) (abi.Kernel, error) { return stubKernel{k.Params}, nil },
			MaxSteps:      20000, MaxCallDepth: 64, MaxAllocBytes: 1 << 20,
		})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, fn := range exe.Funcs {
			if fn.Kind != vm.FuncVM {
				continue
			}
			args := make([]vm.Value, fn.NumArgs)
			for i := range args {
				args[i] = fuzzArg(fn, i)
			}
			if _, _, err := machine.Call(ctx, fn.Name, args); err != nil {
				require.NotContains(t, err.Error(), "internal error", fn.Name)
			}
		}
	})
}

// fuzzArg makes a small argument from a recorded signature (symbolic
// dimensions become 2; oversized ones are capped).
func fuzzArg(fn vm.Function, i int) vm.Value {
	if i >= len(fn.Sigs) || !fn.Sigs[i].Tensor {
		return vm.Int(1)
	}
	sg := fn.Sigs[i]
	dt, err := tensor.ParseDType(sg.DType)
	if err != nil {
		dt = tensor.Float32
	}
	shape := make([]int64, len(sg.Dims))
	for j, d := range sg.Dims {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 || n > 1024 {
			n = 2
		}
		shape[j] = n
	}
	t, err := tensor.NewChecked(dt, shape)
	if err != nil {
		return vm.Int(0)
	}
	return vm.TensorValue(t)
}

// seal wraps a payload in a header with a correct length and checksum.
func seal(payload []byte) []byte {
	out := append([]byte(vm.Magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(out[8:], vm.FormatVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	return append(out, payload...)
}
