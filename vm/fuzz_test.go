package vm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzExecutable flips, truncates and extends executables: every mutant is
// rejected with an error or links and runs safely (bounded by a step budget,
// a call depth and an allocation limit); nothing panics or hangs, and no
// panic is hidden inside the VM's recovery either.
func FuzzExecutable(f *testing.F) {
	withExternal, err := buildExternal(f, ExternalModule{Kind: "test.double", Symbols: []string{"ext.double"}, Payload: []byte("xx")})
	require.NoError(f, err)
	for _, exe := range []*Executable{buildAddOne(f), buildFib(f), buildCalls(f), withExternal} {
		data := exe.Marshal()
		f.Add(data, false)
		f.Add(data[:len(data)/2], false)
		f.Add(data[headerSize:], true)
	}
	// With sealed set, the input is a payload given a correct header and
	// checksum, so that mutants reach the section decoder and the validator
	// instead of stopping at the checksum.
	f.Fuzz(func(t *testing.T, data []byte, sealed bool) {
		if sealed {
			data = reseal(data)
		}
		exe, err := Unmarshal(data)
		if err != nil {
			require.NotEmpty(t, err.Error(), "empty error")
			return
		}
		// What decodes re-encodes to something that decodes the same way.
		again, err := Unmarshal(exe.Marshal())
		require.NoError(t, err, "re-decoding a valid executable")
		_ = again
		vm, err := New(exe, Options{CompileKernel: goKernels, LinkExternal: doubleLinker, MaxSteps: 20000, MaxCallDepth: 64, MaxAllocBytes: 1 << 20})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, fn := range exe.Funcs {
			if fn.Kind != FuncVM {
				continue
			}
			args := make([]Value, fn.NumArgs)
			for i := range args {
				if i%2 == 0 {
					args[i] = TensorValue(vecF32(1, 2, 3))
				} else {
					args[i] = Int(int64(i))
				}
			}
			_, _, err := vm.Call(ctx, fn.Name, args)
			if err != nil {
				require.NotContains(t, err.Error(), "internal error", fn.Name)
			}
		}
	})
}
