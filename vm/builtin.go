package vm

import (
	"fmt"
	"sort"
	"sync"
)

// BuiltinFunc implements a packed function. args excludes the %vm context;
// it is a scratch slice the VM reuses, so a builtin must copy what it keeps,
// and must not keep a tensor beyond the call (the VM recycles the headers
// of tensors its function does not return).
// A builtin reports bad input as an error (the VM adds the function,
// instruction and source position); it must not panic.
type BuiltinFunc func(m *Machine, args []Value) (Value, error)

// Builtin is a registered packed function.
type Builtin struct {
	Name string
	// WithCtx builtins take %vm as their first argument in the bytecode
	// (call_builtin_with_ctx); the VM strips it and passes the Machine.
	WithCtx bool
	// MinArgs and MaxArgs bound the argument count (excluding %vm); MaxArgs
	// -1 means variadic. Load-time validation checks every call against them.
	MinArgs, MaxArgs int
	Fn               BuiltinFunc
}

func (b *Builtin) arity() string {
	switch {
	case b.MaxArgs == b.MinArgs:
		return fmt.Sprintf("%d arguments", b.MinArgs)
	case b.MaxArgs < 0:
		return fmt.Sprintf("at least %d arguments", b.MinArgs)
	}
	return fmt.Sprintf("%d to %d arguments", b.MinArgs, b.MaxArgs)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Builtin{}
)

// RegisterBuiltin adds a packed function to the registry every executable
// resolves its packed entries against. Registering a name twice is an error.
func RegisterBuiltin(b *Builtin) error {
	registryMu.Lock()
	defer registryMu.Unlock()
	if b.Name == "" || b.Fn == nil {
		return fmt.Errorf("builtin needs a name and a function")
	}
	if _, dup := registry[b.Name]; dup {
		return fmt.Errorf("builtin %q is already registered", b.Name)
	}
	registry[b.Name] = b
	return nil
}

func mustRegister(b *Builtin) {
	if err := RegisterBuiltin(b); err != nil {
		panic(err)
	}
}

// LookupBuiltin returns the builtin named name, or nil.
func LookupBuiltin(name string) *Builtin {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[name]
}

// Builtins lists the registered names, sorted.
func Builtins() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
