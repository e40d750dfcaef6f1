package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/tensor"

	"github.com/spf13/pflag"
)

// semanticsFlags are the input flags of opt --verify-semantics and bisect.
type semanticsFlags struct {
	inputs  *string
	random  *bool
	seed    *uint64
	fn      *string
	dir     *string
	symbols repeatFlag
	files   repeatFlag
	// given are the values of --inputs and --input, bound to the
	// function's parameters (and tuple elements) once the module is read.
	given []givenValue
}

// givenValue is a tensor a flag gave for a parameter or tuple element.
type givenValue struct {
	flag, name string
	t          *tensor.Tensor
}

func addSemanticsFlags(fs *pflag.FlagSet, dirDefault string) *semanticsFlags {
	sf := &semanticsFlags{
		inputs: fs.String("inputs", "", "the function's parameters by name from `FILE.npz` (semantic checking; a tuple parameter p by the keys p.0, p.1, ...)"),
		random: fs.Bool("random-inputs", false, "seeded random values for the parameters --inputs does not give"),
		seed:   fs.Uint64("seed", defaultSeed, "the seed of --random-inputs"),
		fn:     fs.String("func", "main", "the Relax function whose result is checked"),
		dir:    fs.String("semantics-dir", dirDefault, "where to write the modules before and after a pass that changes the result"),
	}
	fs.Var(&sf.files, "input", "a parameter's value (`name=file.npy`), repeatable; element i of a tuple parameter p is p.i (p.1.0 nested)")
	fs.Var(&sf.symbols, "symbolic", "a symbolic dimension's value (`n=8`), repeatable; others are 4 or come from --inputs")
	return sf
}

// inputs builds the semcheck inputs; errors are usage errors.
func (sf *semanticsFlags) build() (semcheck.Inputs, error) {
	if *sf.fn == "" {
		*sf.fn = "main"
	}
	in := semcheck.Inputs{Func: *sf.fn, Seed: *sf.seed, Dims: map[string]int64{}}
	for _, kv := range sf.symbols {
		name, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || name == "" || err != nil || n < 0 {
			return in, fmt.Errorf("--symbolic %q: want name=N with N >= 0", kv)
		}
		in.Dims[name] = n
	}
	if *sf.inputs == "" && len(sf.files) == 0 && !*sf.random {
		return in, errors.New("semantic checking needs --input name=FILE.npy, --inputs FILE.npz or --random-inputs")
	}
	if *sf.inputs != "" || len(sf.files) > 0 {
		in.Given = map[string]op.Value{}
		in.NoRandom = !*sf.random
	}
	sf.given = nil
	if *sf.inputs != "" {
		named, err := tensor.ReadNpz(*sf.inputs)
		if err != nil {
			return in, fmt.Errorf("--inputs: %v", err)
		}
		for _, n := range named {
			sf.given = append(sf.given, givenValue{"--inputs " + n.Name, n.Name, n.Tensor})
		}
	}
	for _, kv := range sf.files {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return in, fmt.Errorf("--input %q: want name=file.npy", kv)
		}
		t, err := tensor.ReadNpyFile(path)
		if err != nil {
			return in, fmt.Errorf("--input %s: %v", name, err)
		}
		sf.given = append(sf.given, givenValue{"--input " + kv, name, t})
	}
	return in, nil
}

// bind gives in the values of --inputs and --input as the parameters of
// its function in mod, tuples assembled from their elements (inputs.go);
// errors are in the user's terms.
func (sf *semanticsFlags) bind(in *semcheck.Inputs, mod *ir.Module) error {
	if len(sf.given) == 0 {
		return nil
	}
	f := mod.Func(in.Func)
	if f == nil {
		return fmt.Errorf("--func %s: no Relax function named %s", in.Func, in.Func)
	}
	b := newIRBinder(f, in.Func)
	for _, g := range sf.given {
		if err := b.give(g.flag, g.name, g.t); err != nil {
			return err
		}
	}
	for i, p := range f.Params {
		v, given, err := b.value(i)
		if err != nil {
			return err
		}
		if given {
			in.Given[p.Name] = v
		}
	}
	return nil
}

// checker installs a semantic Checker in pc.
func (sf *semanticsFlags) checker(pc *passes.PassContext) (*semcheck.Checker, error) {
	in, err := sf.build()
	if err != nil {
		return nil, err
	}
	c := &semcheck.Checker{Inputs: in, Dir: *sf.dir}
	pc.Instruments = append(pc.Instruments, c)
	return c, nil
}
