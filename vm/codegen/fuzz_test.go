package codegen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm"
)

// FuzzBuild: whatever the parser accepts and the barriers take to phase
// build, code generation either reports diagnostics or produces an
// executable that survives the binary format and links (its kernels
// compile: Build compiled them already). Nothing panics.
func FuzzBuild(f *testing.F) {
	for _, pattern := range []string{"../../testdata/lowered_*.tvms", "../../testdata/models/*.tvms", "testdata/*.tvms"} {
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
			if !diags.HasErrors() {
				t.Fatalf("Build failed without an error diagnostic: %v", diags)
			}
			return
		}
		back, err := vm.Unmarshal(exe.Marshal())
		if err != nil {
			t.Fatalf("the executable does not survive the binary format: %v", err)
		}
		if _, err := Link(back, vm.Options{}); err != nil {
			t.Fatalf("a built executable does not link: %v", err)
		}
	})
}
