package deps

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rules is the import policy of phasec's packages (paths relative to the
// module). Syntax, as in go/build's deps_test.go:
//
//	a, b < c, d;    c and d may import a and b, and all that a and b may
//	a < b < c;      a chain: b may import a, c may import b (and so a)
//	NONE < a;       a imports nothing of phasec
//	# comment
//
// Every package appears on the right of exactly one rule, after the rules
// that define what it imports, so the table reads top-down from the leaves.
// An ALL-CAPS name is a group, not a package: RUNTIME < x lets x import the
// whole runtime.
//
// To add a package, add a rule naming the packages it imports, below
// them; to let a package import another, add the import to its rule. The
// test names the file of any import the table does not allow.
const rules = `
# Leaves.
NONE < diag, internal/ptrmap, tensor, vm/blas, ir/randmod;

# The runtime: what a program that only runs .pvm files links. The
# contract with the compiler is vm/abi; kernels arrive as encoded TIR.
tensor < vm/abi < vm;
diag, internal/ptrmap < ir < ir/tirenc;
ir, vm/abi, vm/blas < vm/kernel;
vm, vm/blas < vm/extern;
vm, vm/kernel, vm/extern, ir/tirenc < vm/loader;
vm, vm/kernel, ir/tirenc < vm/kernel/tunedb;
vm/loader < RUNTIME;

# The compiler.
diag < diag/format;
ir, tensor < op;
ir < phase;
op < ir/irgen;
ir < syntax/internal/tvmmeta;
op, syntax/internal/tvmmeta < syntax, syntax/printer;
op, phase, vm/abi < wellformed;
syntax/printer, wellformed < passes;
passes, syntax < passes/passtest;
passes < lower;
op, vm/abi < eval;
ir < transform/dpl;
passes, eval, syntax, vm/kernel, vm/extern, internal/ptrmap, transform/dpl < transform;
lower, transform < barrier;
barrier, eval, syntax < eval/evaltest;
wellformed, vm, vm/kernel, ir/tirenc < codegen;
codegen, eval, passes, syntax, ir/randmod, RUNTIME, barrier < semcheck;
passes < htmlview;

# Frontends: a model format in, a module at Ingest out. They build IR
# with ir.Builder and op's records (op.Def Eval folds shape computations);
# of the runtime they use only tensor.
NONE < frontend/onnx/onnxpb;
frontend/onnx/onnxpb, op, tensor, diag < frontend/onnx;
frontend/onnx/onnxpb < frontend/onnx/onnxtest;

# Commands, and this test.
semcheck, barrier, diag/format, ir/irgen, htmlview, frontend/onnx, vm/kernel/tunedb < cmd/phasec;
NONE < internal/deps, syntax/internal/gennames;
# make bench-ort's timer runs .pvm files as any runtime user would.
RUNTIME < bench/ort;
`

// testRules lets a package's internal test files (package p in
// p_test.go) import more than p itself may: "p: a, b". They compile into
// p only for its tests, so the test also checks that none of a, b imports
// p (which would be a cycle). Runtime packages get no entry: their
// internal tests follow the runtime's rules (an external p_test package
// may use the compiler to make inputs).
const testRules = `
bench/ort: syntax;
cmd/phasec: frontend/onnx/onnxtest;
codegen: barrier, eval, syntax, vm/loader;
eval: syntax;
htmlview: barrier, syntax;
lower: ir/irgen, syntax;
transform: barrier, syntax, syntax/printer, ir/irgen, eval/evaltest, passes/passtest, semcheck, vm;
syntax: ir/irgen, syntax/printer;
syntax/printer: ir/irgen, syntax;
wellformed: ir/irgen, syntax, syntax/printer;
`

// parseTestRules reads testRules: package -> extra imports of its tests.
func parseTestRules(text string) (policy, error) {
	extra := policy{}
	for _, rule := range strings.Split(text, ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		pkg, list, ok := strings.Cut(rule, ":")
		if !ok {
			return nil, fmt.Errorf("test rule %q has no colon", strings.TrimSpace(rule))
		}
		set := map[string]bool{}
		for _, n := range strings.Split(list, ",") {
			set[strings.TrimSpace(n)] = true
		}
		extra[strings.TrimSpace(pkg)] = set
	}
	return extra, nil
}

// runtimePackages must not reach compilerPackages, directly or not.
var (
	runtimePackages  = []string{"tensor", "vm", "vm/abi", "vm/blas", "vm/kernel", "vm/kernel/tunedb", "vm/extern", "vm/loader", "ir/tirenc"}
	compilerPackages = []string{"syntax", "op", "wellformed", "passes", "lower", "transform", "eval", "codegen", "barrier", "semcheck"}
)

// policy maps each package (or group) to the packages it may import.
type policy map[string]map[string]bool

var groupName = regexp.MustCompile(`^[A-Z]+$`)

// parseRules reads the rule table; it reports malformed rules, packages
// defined twice and names used before their rule.
func parseRules(text string) (policy, error) {
	allowed := policy{"NONE": {}}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l, _, _ = strings.Cut(l, "#")
		lines = append(lines, l)
	}
	for _, rule := range strings.Split(strings.Join(lines, " "), ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		tiers := strings.Split(rule, "<")
		if len(tiers) < 2 {
			return nil, fmt.Errorf("rule %q has no <", strings.TrimSpace(rule))
		}
		var prev []string
		for i, tier := range tiers {
			var names []string
			for _, n := range strings.Split(tier, ",") {
				if n = strings.TrimSpace(n); n == "" {
					return nil, fmt.Errorf("rule %q has an empty name", strings.TrimSpace(rule))
				}
				names = append(names, n)
			}
			if i > 0 {
				for _, n := range names {
					if _, dup := allowed[n]; dup {
						return nil, fmt.Errorf("%s has two rules", n)
					}
					set := map[string]bool{}
					for _, p := range prev {
						if p == "NONE" {
							continue
						}
						set[p] = true
						for q := range allowed[p] {
							set[q] = true
						}
					}
					allowed[n] = set
				}
			}
			for _, n := range names {
				if _, ok := allowed[n]; !ok && i < len(tiers)-1 {
					return nil, fmt.Errorf("%s is used before its rule", n)
				}
			}
			prev = names
		}
	}
	delete(allowed, "NONE")
	return allowed, nil
}

// pkgImports is one package's phasec imports: imported path -> the first
// file importing it.
type pkgImports map[string]string

// modulePath reads the module path from go.mod at root.
func modulePath(t *testing.T, root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	require.FailNow(t, "go.mod has no module line")
	return ""
}

// loadImports parses the imports of every package of the module under
// root (go/parser, ImportsOnly), keyed by path relative to the module.
//
// A package's files include its internal test files (package p in
// p_test.go): they compile into p, so their imports are arrows of p and
// must follow the same rules. External test packages (package p_test)
// are skipped: nothing can import them, so they add no arrow any other
// package depends on, and tests of the runtime may use the compiler to
// make their inputs (tirenc's round trip parses the corpus). Files of
// every build tag are read.
func loadImports(t *testing.T, root string) (pkgs, tests map[string]pkgImports) {
	mod := modulePath(t, root)
	pkgs, tests = map[string]pkgImports{}, map[string]pkgImports{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "_test") && strings.HasSuffix(path, "_test.go") {
			return nil // an external test package
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if pkgs[rel] == nil {
			pkgs[rel] = pkgImports{}
		}
		into := pkgs[rel]
		if strings.HasSuffix(path, "_test.go") {
			if tests[rel] == nil {
				tests[rel] = pkgImports{}
			}
			into = tests[rel]
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if p, ok := strings.CutPrefix(p, mod+"/"); ok {
				if _, seen := into[p]; !seen {
					into[p] = filepath.ToSlash(path)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return pkgs, tests
}

// violations lists every import or package the policy does not allow:
// pkgs are the packages' own imports, tests their internal test files'
// (allowed what the package is, plus its testRules entry, if that makes
// no cycle).
func violations(allowed, testExtra policy, pkgs, tests map[string]pkgImports) []string {
	var out []string
	for _, pkg := range sortedKeys(pkgs) {
		ok, listed := allowed[pkg]
		if !listed {
			out = append(out, fmt.Sprintf("package %s is missing from the rule table (add a rule for it to internal/deps/deps_test.go)", pkg))
			continue
		}
		for _, imp := range sortedKeys(pkgs[pkg]) {
			if !ok[imp] {
				out = append(out, fmt.Sprintf("%s imports %s (%s): not allowed by the rule table", pkg, imp, pkgs[pkg][imp]))
			}
		}
		for _, imp := range sortedKeys(tests[pkg]) {
			switch {
			case ok[imp]:
			case !testExtra[pkg][imp]:
				out = append(out, fmt.Sprintf("%s's tests import %s (%s): not allowed by the rule table or testRules", pkg, imp, tests[pkg][imp]))
			case reaches(pkgs, imp, pkg) != nil:
				out = append(out, fmt.Sprintf("%s's tests import %s (%s), which imports %s: a cycle", pkg, imp, tests[pkg][imp], pkg))
			}
		}
	}
	for _, name := range sortedKeys(allowed) {
		if _, exists := pkgs[name]; !exists && !groupName.MatchString(name) {
			out = append(out, fmt.Sprintf("the rule table lists %s, which is not a package", name))
		}
	}
	return out
}

// reaches returns an import path from pkg to target in the actual graph,
// or nil.
func reaches(pkgs map[string]pkgImports, pkg, target string) []string {
	seen := map[string]bool{}
	var walk func(p string) []string
	walk = func(p string) []string {
		if p == target {
			return []string{p}
		}
		if seen[p] {
			return nil
		}
		seen[p] = true
		for _, q := range sortedKeys(pkgs[p]) {
			if path := walk(q); path != nil {
				return append([]string{p}, path...)
			}
		}
		return nil
	}
	return walk(pkg)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestDependencies checks every package's imports against the table.
func TestDependencies(t *testing.T) {
	allowed, err := parseRules(rules)
	require.NoError(t, err)
	extra, err := parseTestRules(testRules)
	require.NoError(t, err)
	pkgs, tests := loadImports(t, "../..")
	require.Contains(t, pkgs, "vm", "the walk found the module's packages")
	for _, v := range violations(allowed, extra, pkgs, tests) {
		assert.Fail(t, v)
	}
}

// TestRuntimeStandsApart: no runtime package reaches a compiler package,
// through any chain of imports (its internal tests' included), in the
// code as it is (whatever the table says), and neither the table nor
// testRules allows it.
func TestRuntimeStandsApart(t *testing.T) {
	allowed, err := parseRules(rules)
	require.NoError(t, err)
	extra, err := parseTestRules(testRules)
	require.NoError(t, err)
	pkgs, tests := loadImports(t, "../..")
	for _, r := range runtimePackages {
		require.Contains(t, pkgs, r)
		assert.Empty(t, extra[r], "testRules widens runtime package %s", r)
		for _, c := range compilerPackages {
			require.Contains(t, pkgs, c)
			for imp := range tests[r] {
				if path := reaches(pkgs, imp, c); path != nil {
					assert.Failf(t, "runtime package's tests import a compiler package", "%s's tests import %s: %s -> %s", r, c, r, strings.Join(path, " -> "))
				}
			}
			if path := reaches(pkgs, r, c); path != nil {
				assert.Failf(t, "runtime package imports a compiler package", "%s imports %s: %s", r, c, strings.Join(path, " -> "))
			}
			assert.False(t, allowed[r][c], "the rule table lets runtime package %s import %s", r, c)
		}
	}
}

// TestRulesCatchNewArrows: the checker itself reports an import against
// the table, a package without a rule, and malformed tables.
func TestRulesCatchNewArrows(t *testing.T) {
	allowed, err := parseRules(`NONE < a; a < b; b < c;`)
	require.NoError(t, err)
	assert.True(t, allowed["c"]["a"], "layers are transitive")
	assert.False(t, allowed["a"]["b"])

	extra, err := parseTestRules(`a: b; b: c;`)
	require.NoError(t, err)
	got := violations(allowed, extra, map[string]pkgImports{
		"a": {"c": "a/a.go"},
		"b": {"a": "b/b.go"},
		"c": {"a": "c/c.go", "b": "c/c.go"},
		"d": {},
	}, map[string]pkgImports{
		"a": {"b": "a/a_test.go"}, // allowed by testRules, but b imports a
		"b": {"c": "b/b_test.go"}, // allowed by testRules, and c imports b
		"c": {"d": "c/c_test.go"}, // in neither
	})
	assert.Equal(t, []string{
		"a imports c (a/a.go): not allowed by the rule table",
		"a's tests import b (a/a_test.go), which imports a: a cycle",
		"b's tests import c (b/b_test.go), which imports b: a cycle",
		"c's tests import d (c/c_test.go): not allowed by the rule table or testRules",
		"package d is missing from the rule table (add a rule for it to internal/deps/deps_test.go)",
	}, got)

	for table, want := range map[string]string{
		`NONE < a; NONE < a;`: "a has two rules",
		`b < a;`:              "b is used before its rule",
		`a;`:                  "has no <",
		`NONE < a,;`:          "empty name",
	} {
		_, err := parseRules(table)
		assert.ErrorContains(t, err, want, table)
	}
	assert.True(t, slices.Contains(compilerPackages, "codegen"))
}
