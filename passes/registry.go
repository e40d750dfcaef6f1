package passes

import (
	"encoding/json"
	"fmt"
	"maps"
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
	// Strings is a list of strings, written as a JSON array
	// (entry_functions=["main","f"]); its value is a []string.
	Strings
	// JSON is any JSON value (an object, an array, a string, a number, a
	// bool), as TVM's passes take Python dicts and lists
	// (binding_map={"batch":1}); its value is what encoding/json decodes
	// with UseNumber: map[string]any, []any, string, json.Number, bool.
	// The pass checks the shape it needs when it is built (Define's build
	// hook or its run function).
	JSON
)

var valueTypeNames = [...]string{Int: "int", Bool: "bool", String: "string", Float: "float", Strings: "strings", JSON: "json"}

func (t ValueType) String() string { return valueTypeNames[t] }

// ParseValue converts text to a value of type t: int64, bool, string,
// float64, []string or a decoded JSON value. Strings may be bare or
// double-quoted.
func (t ValueType) ParseValue(text string) (any, error) {
	switch t {
	case Strings:
		var v []string
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return nil, fmt.Errorf("want a JSON array of strings, got %s", text)
		}
		return v, nil
	case JSON:
		return parseJSON(text)
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
	case Strings:
		switch x := v.(type) {
		case []string:
			return x, true
		case []any:
			out := make([]string, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, false
				}
				out[i] = s
			}
			return out, true
		}
	case JSON:
		return v, v != nil
	}
	return nil, false
}

// parseJSON decodes one JSON value, numbers kept exact (json.Number).
func parseJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("want a JSON value, got %s: %v", text, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("want one JSON value, got %s", text)
	}
	if v == nil {
		return nil, fmt.Errorf("want a JSON value other than null")
	}
	return v, nil
}

// Option declares a typed pass option, written `Pass{name=value}`.
type Option struct {
	Name    string
	Type    ValueType
	Default any
	Doc     string
	// Check, when set, validates a value of the right type further (one
	// of a set of words, a range), as TVM's passes reject such values when
	// the pass is created; a pipeline reports its error at the pass.
	Check func(v any) error
}

// Options holds a pass's option values, defaults filled in.
type Options map[string]any

func (o Options) Int(name string) int64     { return o[name].(int64) }
func (o Options) Bool(name string) bool     { return o[name].(bool) }
func (o Options) String(name string) string { return o[name].(string) }
func (o Options) Float(name string) float64 { return o[name].(float64) }

// Strings returns a Strings option's value.
func (o Options) Strings(name string) []string { return o[name].([]string) }

// JSON returns a JSON option's value (see ValueType JSON).
func (o Options) JSON(name string) any { return o[name] }

// Registry resolves pass names to pass values: the names of textual
// pipelines (`--passes`), of PassContext.Required and Disabled, and the
// passes the static check's hints may name. It is built from values
// (NewRegistry) by the program that offers textual pipelines, never by
// side effects at init: barrier.Registry holds every pass of phasec, and a
// test extends it with its own passes (With). A Registry is immutable.
type Registry struct {
	byName map[string]*Pass
	sorted []*Pass
}

// NewRegistry returns the registry of ps and, transitively, of their
// prerequisites. It panics when two different passes share a name (a bug
// in the list; the same value listed twice is fine).
func NewRegistry(ps ...*Pass) *Registry {
	return (&Registry{byName: map[string]*Pass{}}).With(ps...)
}

// With returns a registry holding r's passes and ps (with their
// prerequisites); r is unchanged. It panics on a name clash.
func (r *Registry) With(ps ...*Pass) *Registry {
	out := &Registry{byName: maps.Clone(r.byName)}
	var add func(p *Pass)
	add = func(p *Pass) {
		if p.kind == KindSequential {
			panic("passes.Registry: " + p.info.Name + " is a sequence, not a pass")
		}
		if q, dup := out.byName[p.info.Name]; dup {
			if q != p {
				panic("passes.Registry: two passes named " + p.info.Name)
			}
			return
		}
		out.byName[p.info.Name] = p
		for _, q := range p.info.Prerequisites {
			add(q)
		}
	}
	for _, p := range ps {
		add(p)
	}
	out.sorted = slices.SortedFunc(maps.Values(out.byName), func(a, b *Pass) int { return strings.Compare(a.info.Name, b.info.Name) })
	return out
}

// Lookup returns the pass named name.
func (r *Registry) Lookup(name string) (*Pass, bool) {
	p, ok := r.byName[name]
	return p, ok
}

// Passes returns every pass, sorted by name.
func (r *Registry) Passes() []*Pass { return slices.Clone(r.sorted) }

// Names returns the pass names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, len(r.sorted))
	for i, p := range r.sorted {
		names[i] = p.info.Name
	}
	return names
}

// New returns the pass named name with the given options (missing ones
// take their defaults), type-checked against its declared options.
func (r *Registry) New(name string, opts Options) (*Pass, error) {
	p, ok := r.Lookup(name)
	if !ok {
		return nil, unknownName("pass", name, r.Names())
	}
	return p.With(opts)
}

// UnknownPass returns nil when name is a pass of r, else the "unknown
// pass" error with the closest name.
func (r *Registry) UnknownPass(name string) error {
	if _, ok := r.Lookup(name); ok {
		return nil
	}
	return unknownName("pass", name, r.Names())
}

// registryOf is the registry of the passes a pipeline contains (with their
// prerequisites), for a pipeline built in Go: the first pass of each name
// wins, so a pipeline may hold one pass with different options.
func registryOf(p *Pass) *Registry {
	r := &Registry{byName: map[string]*Pass{}}
	var walk func(p *Pass)
	walk = func(p *Pass) {
		if p.kind == KindSequential {
			for _, c := range p.children {
				walk(c)
			}
			return
		}
		if _, seen := r.byName[p.info.Name]; seen {
			return
		}
		r.byName[p.info.Name] = p
		for _, q := range p.info.Prerequisites {
			walk(q)
		}
	}
	walk(p)
	r.sorted = slices.SortedFunc(maps.Values(r.byName), func(a, b *Pass) int { return strings.Compare(a.info.Name, b.info.Name) })
	return r
}

var configRegistry struct {
	sync.RWMutex
	configs map[string]*ConfigKey
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
	configRegistry.Lock()
	defer configRegistry.Unlock()
	if configRegistry.configs == nil {
		configRegistry.configs = map[string]*ConfigKey{}
	}
	if _, dup := configRegistry.configs[k.Name]; dup {
		panic("passes.RegisterConfig: duplicate key " + k.Name)
	}
	configRegistry.configs[k.Name] = &k
}

func lookupConfig(name string) (*ConfigKey, bool) {
	configRegistry.RLock()
	defer configRegistry.RUnlock()
	k, ok := configRegistry.configs[name]
	return k, ok
}

// ConfigKeys returns every registered config key, sorted by name.
func ConfigKeys() []*ConfigKey {
	configRegistry.RLock()
	defer configRegistry.RUnlock()
	ks := make([]*ConfigKey, 0, len(configRegistry.configs))
	for _, k := range configRegistry.configs {
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
