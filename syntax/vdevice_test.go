package syntax

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
)

// tvmPrintedDir holds modules in the exact form TVM v0.23's mod.script()
// prints them: each must print back byte for byte.
const tvmPrintedDir = "tvm_printed"

func TestTVMPrintedByteIdentical(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusRoot, tvmPrintedDir, "*.tvms"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			got := printer.Print(parseOrFail(t, path, src))
			if got != string(src) {
				// Name the first differing line rather than dump both files.
				assert.Failf(t, "print(parse(x)) != x", "%s", firstLineDiff(string(src), got))
			}
		})
	}
}

// TestVDeviceReferences checks that each annotation resolves to the device
// TVM's LookupVDevice picks: "cuda:1" is the second cuda device (the third
// entry), "llvm" the first llvm one, "vdevice:3" the fourth entry; that an
// op's result inherits its operands' device; and that to_vdevice moves it.
func TestVDeviceReferences(t *testing.T) {
	path := filepath.Join(corpusRoot, "tvm_forms", "vdevice_string_targets.tvms")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod := parseOrFail(t, path, src)
	require.Len(t, mod.VDevices, 4)
	f := mod.Func("foo")
	require.NotNil(t, f)
	dev := func(s ir.StructInfo) *ir.VDevice {
		ti, ok := s.(*ir.TensorInfo)
		require.True(t, ok, "%v is not a tensor", s)
		return ti.VDevice
	}
	assert.Same(t, mod.VDevices[2], dev(f.Params[0].StructInfo()))
	assert.Same(t, mod.VDevices[0], dev(f.Params[1].StructInfo()))
	assert.Same(t, mod.VDevices[3], dev(f.Params[2].StructInfo()))
	vars := map[string]*ir.Var{}
	for _, blk := range f.Body.(*ir.SeqExpr).Blocks {
		for _, b := range blk.Bindings {
			vars[b.BoundVar().Name] = b.BoundVar()
		}
	}
	// s keeps its device-free annotation (less specific than R.add's).
	assert.Nil(t, dev(vars["s"].StructInfo()))
	assert.Same(t, mod.VDevices[1], dev(vars["t"].StructInfo()), "to_vdevice(b, \"cuda\") is on cuda:0")
	assert.Same(t, mod.VDevices[3], dev(vars["u"].StructInfo()), "hint_on_device keeps the input's struct info")
	// w = s * a: s has no device, a is on cuda:1, so the product is there.
	assert.Same(t, mod.VDevices[2], dev(vars["w"].StructInfo()))
}

// TestGlobalInfoErrors: global infos phasec cannot carry get a positioned
// diagnostic; the ones it carries compare by value.
func TestGlobalInfoErrors(t *testing.T) {
	const head = "@I.ir_module\nclass Module:\n    I.module_global_infos({"
	const tail = "})\n    @R.function\n    def main(x: R.Tensor((4,), \"float32\")):\n        return x\n"
	for infos, want := range map[string]string{
		`"x": [R.cpu(0)]`:                                  "3:34: error: unsupported global info: a call of R.cpu",
		`"m": [I.dummy_global_info()], "m": []`:            "3:58: error: duplicate global info key \"m\"",
		`"m": [R.device_mesh((2,), [0, -1])]`:              "expected a non-negative integer, found -1",
		`"m": [R.device_mesh((2,), I.Range(3, 1))]`:        "device range [3, 1) is empty",
		`"m": I.dummy_global_info()`:                       "expected a list of global infos for \"m\"",
		`"m": [I.dummy_global_info(1)]`:                    "I.dummy_global_info() takes no arguments",
		`1: [I.dummy_global_info()]`:                       "expected a global info name string",
		`"m": [R.device_mesh((2,), I.Range(0, 2), 3)]`:     "R.device_mesh",
		`"m": [R.device_mesh(device_ids=[0, 1], shape=2)]`: "expected a list of integers",
	} {
		_, diags := Parse("gi.tvms", []byte(head+infos+tail))
		require.True(t, diags.HasErrors(), "%s accepted", infos)
		assert.Contains(t, diags.Error(), want, infos)
	}
	a := parseOrFail(t, "a", []byte(head+`"m": [R.device_mesh((2,), I.Range(0, 2))]`+tail))
	b := parseOrFail(t, "b", []byte(head+`"m": [R.device_mesh((2,), [0, 1])]`+tail))
	require.Len(t, a.GlobalInfos, 1)
	assert.False(t, ir.StructuralEqual(a, b, ir.EqualOptions{}), "a device range and the same ids listed print differently, so they differ")
	assert.True(t, ir.StructuralEqual(a, parseOrFail(t, "a2", []byte(head+`"m": [R.dist.device_mesh([2], I.Range(0, 2))]`+tail)), ir.EqualOptions{}))
}
