// Package extern is the runtime side of external codegens (TVM's external
// modules, runtime.Module imported into the executable): a registry of
// external module kinds, each a linker that rebuilds the packed functions
// of a module from the payload its compile-time codegen wrote into the
// executable (vm.ExternalModule), and phasec's own kind, phasec_blas, whose
// functions run matrix products on vm/blas's packed SGEMM.
//
// The compiler never runs here: a codegen registered with transform's
// RunCodegen produces (kind, symbols, payload) records, codegen writes them
// into the executable, and vm/loader links them through Link. This package
// imports only the runtime (vm, vm/blas, tensor), so a program that only
// runs .pvm files gets every kind registered here.
//
// Invariants: a linker validates its whole payload before returning
// functions (a corrupt payload is an error, never a panic), and the
// functions check every argument (count, dtype, shape) before touching data.
package extern

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/phasec/phasec/vm"
)

// Linker rebuilds an external module's functions from its payload; it
// returns one function per exported symbol.
type Linker func(m vm.ExternalModule) (map[string]vm.BuiltinFunc, error)

var (
	mu      sync.RWMutex
	linkers = map[string]Linker{}
)

// Register adds the linker of an external module kind. Registering a kind
// twice is an error.
func Register(kind string, l Linker) error {
	mu.Lock()
	defer mu.Unlock()
	if kind == "" || l == nil {
		return fmt.Errorf("external module kind needs a name and a linker")
	}
	if _, dup := linkers[kind]; dup {
		return fmt.Errorf("external module kind %q is already registered", kind)
	}
	linkers[kind] = l
	return nil
}

// Kinds lists the registered kinds, sorted.
func Kinds() []string {
	mu.RLock()
	defer mu.RUnlock()
	ks := make([]string, 0, len(linkers))
	for k := range linkers {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Link rebuilds m with the linker of its kind: vm.Options.LinkExternal.
func Link(m vm.ExternalModule) (map[string]vm.BuiltinFunc, error) {
	mu.RLock()
	l, ok := linkers[m.Kind]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no linker for external module kind %q in this runtime (registered: %v); the program must import the package that registers it", m.Kind, Kinds())
	}
	fns, err := l(m)
	if err != nil {
		return nil, err
	}
	for _, s := range m.Symbols {
		if _, ok := fns[s]; !ok {
			return nil, fmt.Errorf("external module %s does not define %q", m.Kind, s)
		}
	}
	if len(fns) != len(m.Symbols) {
		var extra []string
		for s := range fns {
			if !slices.Contains(m.Symbols, s) {
				extra = append(extra, s)
			}
		}
		sort.Strings(extra)
		return nil, fmt.Errorf("external module %s defines %v, which it does not export", m.Kind, extra)
	}
	return fns, nil
}

func init() {
	if err := Register(BLASKind, linkBLAS); err != nil {
		panic(err)
	}
}
