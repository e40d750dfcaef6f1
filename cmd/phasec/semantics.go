package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

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
}

func addSemanticsFlags(fs *pflag.FlagSet, dirDefault string) *semanticsFlags {
	sf := &semanticsFlags{
		inputs: fs.String("inputs", "", "the function's parameters by name from `FILE.npz` (semantic checking)"),
		random: fs.Bool("random-inputs", false, "seeded random values for the parameters --inputs does not give"),
		seed:   fs.Uint64("seed", defaultSeed, "the seed of --random-inputs"),
		fn:     fs.String("func", "main", "the Relax function whose result is checked"),
		dir:    fs.String("semantics-dir", dirDefault, "where to write the modules before and after a pass that changes the result"),
	}
	fs.Var(&sf.files, "input", "a parameter's value (`name=file.npy`), repeatable")
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
		in.Given = map[string]*tensor.Tensor{}
		in.NoRandom = !*sf.random
	}
	if *sf.inputs != "" {
		named, err := tensor.ReadNpz(*sf.inputs)
		if err != nil {
			return in, fmt.Errorf("--inputs: %v", err)
		}
		for _, n := range named {
			in.Given[n.Name] = n.Tensor
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
		in.Given[name] = t
	}
	return in, nil
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
