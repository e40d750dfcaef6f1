package passes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ValueType is the type of a pass option or config key.
type ValueType uint8

const (
	Int ValueType = iota
	Bool
	String
	Float
)

var valueTypeNames = [...]string{Int: "int", Bool: "bool", String: "string", Float: "float"}

func (t ValueType) String() string { return valueTypeNames[t] }

// ParseValue converts text to a value of type t: int64, bool, string or
// float64. Strings may be bare or double-quoted.
func (t ValueType) ParseValue(text string) (any, error) {
	switch t {
	case Int:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an int, got %q", text)
		}
		return v, nil
	case Bool:
		switch text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, got %q", text)
	case Float:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("want a float, got %q", text)
		}
		return v, nil
	}
	if len(text) >= 2 && text[0] == '"' {
		s, err := strconv.Unquote(text)
		if err != nil {
			return nil, fmt.Errorf("bad quoted string %s", text)
		}
		return s, nil
	}
	return text, nil
}

// check reports whether v is a value of type t (as ParseValue returns them;
// Go ints are accepted for Int and converted).
func (t ValueType) check(v any) (any, bool) {
	switch t {
	case Int:
		switch x := v.(type) {
		case int64:
			return x, true
		case int:
			return int64(x), true
		}
	case Bool:
		_, ok := v.(bool)
		return v, ok
	case String:
		_, ok := v.(string)
		return v, ok
	case Float:
		switch x := v.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		}
	}
	return nil, false
}

// Option declares a typed pass option, written `Pass{name=value}`.
type Option struct {
	Name    string
	Type    ValueType
	Default any
	Doc     string
}

// Options holds a pass's option values, defaults filled in.
type Options map[string]any

func (o Options) Int(name string) int64     { return o[name].(int64) }
func (o Options) Bool(name string) bool     { return o[name].(bool) }
func (o Options) String(name string) string { return o[name].(string) }
func (o Options) Float(name string) float64 { return o[name].(float64) }

// Registration is a registered pass: its declaration, options schema and
// constructor.
type Registration struct {
	Info    Info
	Options []Option
	// New builds the pass from option values (defaults filled in). The
	// registry stamps Info on the result, so New only supplies the
	// implementation: NewModulePass(Info{}, fn) and the like.
	New func(opts Options) *Pass
}

var registry struct {
	sync.RWMutex
	byName  map[string]*Registration
	configs map[string]*ConfigKey
}

// Register adds a pass to the registry. It panics (at init time) on an
// invalid declaration or a duplicate name; requirement names are checked by
// ValidateRegistry once every package has registered.
func Register(r Registration) {
	if err := r.Info.validate(); err != nil {
		panic("passes.Register: " + err.Error())
	}
	if r.New == nil {
		panic("passes.Register: pass " + r.Info.Name + " has no constructor")
	}
	seen := map[string]bool{}
	for _, o := range r.Options {
		if !isIdent(o.Name) || seen[o.Name] {
			panic(fmt.Sprintf("passes.Register: pass %s: bad or duplicate option %q", r.Info.Name, o.Name))
		}
		seen[o.Name] = true
		if _, ok := o.Type.check(o.Default); !ok {
			panic(fmt.Sprintf("passes.Register: pass %s: default of option %s is not a %v", r.Info.Name, o.Name, o.Type))
		}
		if strings.TrimSpace(o.Doc) == "" {
			panic(fmt.Sprintf("passes.Register: pass %s: option %s has no doc", r.Info.Name, o.Name))
		}
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Registration{}
	}
	if _, dup := registry.byName[r.Info.Name]; dup {
		panic("passes.Register: duplicate pass " + r.Info.Name)
	}
	r.Info.Requires = slices.Clone(r.Info.Requires)
	registry.byName[r.Info.Name] = &r
}

// RegisterModulePass registers an option-less module pass.
func RegisterModulePass(info Info, fn ModuleFunc) {
	Register(Registration{Info: info, New: func(Options) *Pass { return NewModulePass(info, fn) }})
}

// RegisterFunctionPass registers an option-less function pass.
func RegisterFunctionPass(info Info, parallel bool, fn FunctionFunc) {
	Register(Registration{Info: info, New: func(Options) *Pass { return NewFunctionPass(info, parallel, fn) }})
}

// Lookup returns the registration of the pass named name.
func Lookup(name string) (*Registration, bool) {
	registry.RLock()
	defer registry.RUnlock()
	r, ok := registry.byName[name]
	return r, ok
}

// Registered returns every registration, sorted by name.
func Registered() []*Registration {
	registry.RLock()
	defer registry.RUnlock()
	rs := make([]*Registration, 0, len(registry.byName))
	for _, r := range registry.byName {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b *Registration) int { return strings.Compare(a.Info.Name, b.Info.Name) })
	return rs
}

// PassNames returns the registered pass names, sorted.
func PassNames() []string {
	var names []string
	for _, r := range Registered() {
		names = append(names, r.Info.Name)
	}
	return names
}

// New builds the registered pass name with the given options (missing ones
// take their defaults). Options are type-checked against the schema.
func New(name string, opts Options) (*Pass, error) {
	r, ok := Lookup(name)
	if !ok {
		return nil, unknownName("pass", name, PassNames())
	}
	full, err := r.fill(opts)
	if err != nil {
		return nil, err
	}
	return r.build(full), nil
}

// MustNew is New that panics on error, for pipelines written in Go.
func MustNew(name string, opts Options) *Pass {
	p, err := New(name, opts)
	if err != nil {
		panic(err)
	}
	return p
}

func (r *Registration) option(name string) *Option {
	for i := range r.Options {
		if r.Options[i].Name == name {
			return &r.Options[i]
		}
	}
	return nil
}

func (r *Registration) optionNames() []string {
	names := make([]string, len(r.Options))
	for i, o := range r.Options {
		names[i] = o.Name
	}
	return names
}

func (r *Registration) fill(opts Options) (Options, error) {
	full := Options{}
	for _, o := range r.Options {
		full[o.Name], _ = o.Type.check(o.Default)
	}
	for _, k := range sortedKeys(opts) {
		o := r.option(k)
		if o == nil {
			return nil, fmt.Errorf("pass %s: %w", r.Info.Name, unknownName("option", k, r.optionNames()))
		}
		v, ok := o.Type.check(opts[k])
		if !ok {
			return nil, fmt.Errorf("pass %s: option %s wants a %v, got %v", r.Info.Name, k, o.Type, opts[k])
		}
		full[k] = v
	}
	return full, nil
}

func (r *Registration) build(opts Options) *Pass {
	p := r.New(opts)
	if p == nil {
		panic("pass " + r.Info.Name + ": constructor returned nil")
	}
	c := *p
	c.info = r.Info
	return &c
}

// ValidateRegistry checks the registry as a whole: every Requires name is
// registered and the requirement graph is acyclic.
func ValidateRegistry() error { return validateRegistrations(Registered()) }

// validateRegistrations checks a set of registrations sorted by name.
func validateRegistrations(regs []*Registration) error {
	byName := map[string]*Registration{}
	var names []string
	for _, r := range regs {
		byName[r.Info.Name] = r
		names = append(names, r.Info.Name)
	}
	var errs []string
	for _, r := range regs {
		if err := r.Info.validate(); err != nil {
			errs = append(errs, err.Error())
		}
		for _, req := range r.Info.Requires {
			if byName[req] == nil {
				errs = append(errs, fmt.Sprintf("pass %s: %v", r.Info.Name, unknownName("required pass", req, names)))
			}
		}
	}
	// Depth-first search for a cycle (white: unseen, grey: on the current
	// path, black: done); recursion follows Requires chains only.
	const (
		white = iota
		grey
		black
	)
	colour := map[string]int{}
	var visit func(name string, path []string) []string
	visit = func(name string, path []string) []string {
		colour[name] = grey
		path = append(path, name)
		if r := byName[name]; r != nil {
			for _, req := range r.Info.Requires {
				switch colour[req] {
				case grey:
					return append(path, req)
				case white:
					if cyc := visit(req, path); cyc != nil {
						return cyc
					}
				}
			}
		}
		colour[name] = black
		return nil
	}
	for _, r := range regs {
		if colour[r.Info.Name] == white {
			if cyc := visit(r.Info.Name, nil); cyc != nil {
				errs = append(errs, "requirement cycle: "+strings.Join(cyc, " -> "))
				break
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// ConfigKey declares a typed PassContext config key, such as
// "relax.FuseOps.max_depth".
type ConfigKey struct {
	Name    string
	Type    ValueType
	Default any
	Doc     string
}

// RegisterConfig declares a config key; it panics on a duplicate.
func RegisterConfig(k ConfigKey) {
	if k.Name == "" || strings.TrimSpace(k.Doc) == "" {
		panic("passes.RegisterConfig: key needs a name and a doc")
	}
	def, ok := k.Type.check(k.Default)
	if !ok {
		panic(fmt.Sprintf("passes.RegisterConfig: default of %s is not a %v", k.Name, k.Type))
	}
	k.Default = def
	registry.Lock()
	defer registry.Unlock()
	if registry.configs == nil {
		registry.configs = map[string]*ConfigKey{}
	}
	if _, dup := registry.configs[k.Name]; dup {
		panic("passes.RegisterConfig: duplicate key " + k.Name)
	}
	registry.configs[k.Name] = &k
}

func lookupConfig(name string) (*ConfigKey, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.configs[name]
	return k, ok
}

// ConfigKeys returns every registered config key, sorted by name.
func ConfigKeys() []*ConfigKey {
	registry.RLock()
	defer registry.RUnlock()
	ks := make([]*ConfigKey, 0, len(registry.configs))
	for _, k := range registry.configs {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b *ConfigKey) int { return strings.Compare(a.Name, b.Name) })
	return ks
}

func configNames() []string {
	var names []string
	for _, k := range ConfigKeys() {
		names = append(names, k.Name)
	}
	return names
}

// ParseConfig parses "key=value" for a registered key.
func ParseConfig(kv string) (string, any, error) {
	key, text, ok := strings.Cut(kv, "=")
	if !ok {
		return "", nil, fmt.Errorf("config %q: want key=value", kv)
	}
	k, found := lookupConfig(key)
	if !found {
		return "", nil, unknownName("config key", key, configNames())
	}
	v, err := k.Type.ParseValue(text)
	if err != nil {
		return "", nil, fmt.Errorf("config %s: %v", key, err)
	}
	return key, v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
