// Command ort is `make bench-ort`: phasec against ONNX Runtime, and phasec
// without fusion (-O1) against its default pipeline, side by side in one run
// on the same models, weights and inputs, printed as ratios.
//
// The driver (no arguments but flags, run from the module root):
//
//  1. gen.py (python3-onnx, NumPy) writes every model twice with the same
//     weights into -out: NAME.tvms with high-level Relax ops, NAME.onnx, the
//     parameters as NAME.npz and the input as NAME.in.npy;
//  2. phasec (built once from ./cmd/phasec) builds NAME.tvms at the default
//     opt level and at -O1;
//  3. ort.js (npm onnxruntime-node, CPU execution provider, all graph
//     optimizations) times the ONNX model with 1 and 2 intra-op threads;
//  4. this program's time subcommand, run with GOMAXPROCS=1 and 2, times
//     each executable the same way (one warm-up, median of the timed runs),
//     counts kernel launches and bytes written per run, and compares the
//     output with ONNX Runtime's single-thread output;
//  5. it prints the tables (phasec/ORT; default/-O1 with launches and
//     bytes; the BERT layer against its GEMMs alone) and writes
//     -out/results.json.
//
// A model whose output differs from ONNX Runtime's by more than -tol
// (max|phasec - ort| / max|ort|) is marked and fails the run, after the
// tables. The repetitions per model are in gen.py's VARIANTS (fewer for the
// big models, so that the whole run takes a few minutes).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "time" {
		if err := runTime(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "bench/ort time: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := drive(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "bench/ort: %v\n", err)
		os.Exit(1)
	}
}

// variant is one entry of gen.py's models.json.
type variant struct {
	Name        string  `json:"name"`
	Doc         string  `json:"doc"`
	Input       string  `json:"input"`
	OutputShape []int   `json:"output_shape"`
	Reps        int     `json:"reps"`
	BudgetS     float64 `json:"budget_s"`
}

// ortResult is ort.js's output line.
type ortResult struct {
	Version string `json:"version"`
	Runs    map[string]struct {
		MS    float64 `json:"ms"`
		CPUms float64 `json:"cpu_ms"`
		N     int     `json:"n"`
	} `json:"runs"`
}

// row is one (model, threads) measurement, as results.json records it.
type row struct {
	Model   string  `json:"model"`
	Threads int     `json:"threads"`
	ORTms   float64 `json:"ort_ms"`
	ORTcpu  float64 `json:"ort_cpu_ms"`
	ORTn    int     `json:"ort_runs"`
	Default *timing `json:"phasec"`    // default opt level (fusion when it lands)
	O1      *timing `json:"phasec_O1"` // -O1: no fusion
	// SameO1 says the -O1 executable is byte for byte the default one
	// (nothing at opt level 2 changed the model): it is not timed again.
	SameO1 bool `json:"O1_same_executable"`
	// FromONNX is the executable phasec builds from the .onnx file itself
	// (phasec build MODEL.onnx: imported with the weights as constants),
	// what a user with only the ONNX model runs.
	FromONNX *timing `json:"phasec_from_onnx,omitempty"`
	Err      string  `json:"error,omitempty"`
}

type config struct {
	dir, out, python, node, goCmd, phasec string
	models                                []string
	threads                               []int
	tol, repScale                         float64
}

func drive(args []string) error {
	fs := flag.NewFlagSet("bench/ort", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.dir, "dir", "bench/ort", "the directory of gen.py, ort.js and node_modules")
	fs.StringVar(&c.out, "out", "bench/ort/out", "where the generated models, executables and outputs go")
	fs.StringVar(&c.python, "python", "/usr/bin/python3", "a python3 with onnx and numpy (Debian's python3-onnx)")
	fs.StringVar(&c.node, "node", "node", "node.js")
	fs.StringVar(&c.goCmd, "go", "go", "the go command (builds ./cmd/phasec)")
	models := fs.String("models", "", "comma-separated variants (default: all of gen.py's VARIANTS)")
	threads := fs.String("threads", "1,2", "thread counts (ORT intraOpNumThreads, phasec GOMAXPROCS)")
	fs.Float64Var(&c.tol, "tol", 1e-4, "the largest max|phasec - ort| / max|ort| accepted (float32 models)")
	fs.Float64Var(&c.repScale, "reps", 1, "scale the timed repetitions and time budgets of gen.py by this factor")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *models != "" {
		c.models = strings.Split(*models, ",")
	}
	for _, t := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 1 {
			return fmt.Errorf("-threads %q: want positive integers", *threads)
		}
		c.threads = append(c.threads, n)
	}
	start, loadStart := time.Now(), loadavg()
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	step("generating models (%s)", filepath.Join(c.dir, "gen.py"))
	if err := run(nil, c.python, append([]string{filepath.Join(c.dir, "gen.py"), c.out}, c.models...)...); err != nil {
		return err
	}
	var variants []variant
	if err := readJSON(filepath.Join(c.out, "models.json"), &variants); err != nil {
		return err
	}
	c.phasec = filepath.Join(c.out, "phasec")
	step("building ./cmd/phasec")
	if err := run(nil, c.goCmd, "build", "-o", c.phasec, "./cmd/phasec"); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	var rows []row
	var version string
	failed := false
	for _, v := range variants {
		rs, ver, err := measure(&c, self, v)
		if ver != "" {
			version = ver
		}
		if err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "bench/ort: %s: %v\n", v.Name, err)
		}
		for _, r := range rs {
			if r.Default != nil && r.Default.MaxRelErr > c.tol || r.O1 != nil && r.O1.MaxRelErr > c.tol {
				failed = true
			}
		}
		rows = append(rows, rs...)
	}
	fmt.Println()
	printTables(os.Stdout, &c, version, rows)
	fmt.Printf("\n(whole run %.0f s; load average %s at the start, %s at the end; results in %s)\n",
		time.Since(start).Seconds(), loadStart, loadavg(), filepath.Join(c.out, "results.json"))
	data, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.out, "results.json"), data, 0o644); err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("some models failed or disagree with ONNX Runtime beyond %g (see above)", c.tol)
	}
	return nil
}

// measure builds and times one variant on both sides, every thread count.
func measure(c *config, self string, v variant) ([]row, string, error) {
	base := filepath.Join(c.out, v.Name)
	reps := max(1, int(float64(v.Reps)*c.repScale))
	budget := time.Duration(v.BudgetS * c.repScale * float64(time.Second))
	rows := make([]row, len(c.threads))
	for i, t := range c.threads {
		rows[i] = row{Model: v.Name, Threads: t}
	}
	fail := func(err error) ([]row, string, error) {
		for i := range rows {
			rows[i].Err = err.Error()
		}
		return rows, "", err
	}

	step("%s: building with phasec (default, -O1, and from the .onnx)", v.Name)
	exes := map[string]string{"default": base + ".pvm", "O1": base + ".O1.pvm", "onnx": base + ".from-onnx.pvm"}
	if err := run(nil, c.phasec, "build", "-o", exes["default"], base+".tvms"); err != nil {
		return fail(err)
	}
	if err := run(nil, c.phasec, "build", "-O1", "-o", exes["O1"], base+".tvms"); err != nil {
		return fail(err)
	}

	same, err := sameFile(exes["default"], exes["O1"])
	if err != nil {
		return fail(err)
	}
	timed := []string{exes["default"], exes["O1"]}
	if same {
		timed = timed[:1]
	}
	// The .onnx through phasec's importer; a model it cannot import is
	// reported in its row, and the rest is still measured.
	onnxErr := run(nil, c.phasec, "build", "-o", exes["onnx"], base+".onnx")
	if onnxErr == nil {
		timed = append(timed, exes["onnx"])
	}

	step("%s: ONNX Runtime, threads %v", v.Name, c.threads)
	var ort ortResult
	out, err := output(nil, c.node, filepath.Join(c.dir, "ort.js"), base+".onnx", base+".in.npy", base+".ort",
		joinInts(c.threads), strconv.Itoa(reps), strconv.FormatFloat(budget.Seconds(), 'f', -1, 64))
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(out, &ort); err != nil {
		return fail(fmt.Errorf("ort.js printed %q: %v", out, err))
	}
	// The reference is ONNX Runtime's single-thread output (the first
	// thread count's).
	ref := fmt.Sprintf("%s.ort.%d.npy", base, c.threads[0])

	for i, t := range c.threads {
		r := ort.Runs[strconv.Itoa(t)]
		rows[i].ORTms, rows[i].ORTcpu, rows[i].ORTn = r.MS, r.CPUms, r.N
		step("%s: phasec default and -O1 (same executable: %v), GOMAXPROCS=%d", v.Name, same, t)
		args := append([]string{"time", "-params", base + ".npz", "-ref", ref, "-o", fmt.Sprintf("%s.phasec.%d", base, t),
			"-reps", strconv.Itoa(reps), "-budget", budget.String()}, timed...)
		out, err := output([]string{"GOMAXPROCS=" + strconv.Itoa(t)}, self, args...)
		if err != nil {
			rows[i].Err = err.Error()
			return rows, ort.Version, err
		}
		var tm []timing
		if err := json.Unmarshal(out, &tm); err != nil || len(tm) != len(timed) {
			return rows, ort.Version, fmt.Errorf("time printed %q, want %d timings (%v)", out, len(timed), err)
		}
		rows[i].Default, rows[i].O1, rows[i].SameO1 = &tm[0], &tm[0], same
		if !same {
			rows[i].O1 = &tm[1]
		}
		if onnxErr == nil {
			rows[i].FromONNX = &tm[len(tm)-1]
		} else {
			rows[i].Err = "phasec build MODEL.onnx: " + onnxErr.Error()
		}
	}
	return rows, ort.Version, nil
}

func printTables(w io.Writer, c *config, version string, rows []row) {
	fmt.Fprintf(w, "phasec vs ONNX Runtime %s (CPU execution provider, all graph optimizations): median ms per run, same weights and inputs.\n", version)
	fmt.Fprintf(w, "threads: ORT intraOpNumThreads / phasec GOMAXPROCS. cpu: median process CPU time per run (all threads; what a run costs\n")
	fmt.Fprintf(w, "whatever the machine's load). err: max|phasec - ort| / max|ort| against ORT's %d-thread output (tolerance %g).\n\n", c.threads[0], c.tol)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tthreads\tORT ms\tphasec ms\tphasec/ORT\tORT cpu\tphasec cpu\tcpu ratio\terr\truns ORT/phasec\t")
	for _, r := range rows {
		if r.Default == nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\tFAILED\t\t\t\t\t\t\t\n", r.Model, r.Threads, msStr(r.ORTms))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t%s\t%d/%d\t\n", r.Model, r.Threads, msStr(r.ORTms), msStr(r.Default.MS),
			r.Default.MS/r.ORTms, msStr(r.ORTcpu), msStr(r.Default.CPUms), r.Default.CPUms/r.ORTcpu,
			errStr(r.Default.MaxRelErr, c.tol), r.ORTn, r.Default.N)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nphasec without fusion (-O1) vs the default pipeline: median ms per run; kernel launches, MB written by kernels\n")
	fmt.Fprintf(w, "(every intermediate and the output) and MB of memory-plan storage, per run.\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tthreads\t-O1 ms\tdefault ms\tdefault/-O1\tcpu default/-O1\tlaunches -O1/default\twritten MB -O1/default\tplan MB -O1/default\terr -O1\t")
	for _, r := range rows {
		if r.Default == nil || r.O1 == nil {
			fmt.Fprintf(tw, "%s\t%d\tFAILED\t\t\t\t\t\t\t\t\n", r.Model, r.Threads)
			continue
		}
		d, o := r.Default, r.O1
		if r.SameO1 {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\tsame executable\t\t%d\t%.2f\t%.2f\t%s\t\n", r.Model, r.Threads, msStr(o.MS), msStr(d.MS),
				d.Launches, mb(d.WrittenBytes), mb(d.PlanBytes), errStr(o.MaxRelErr, c.tol))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2fx\t%.2fx\t%d/%d\t%.2f/%.2f\t%.2f/%.2f\t%s\t\n", r.Model, r.Threads, msStr(o.MS), msStr(d.MS), d.MS/o.MS, d.CPUms/o.CPUms,
			o.Launches, d.Launches, mb(o.WrittenBytes), mb(d.WrittenBytes), mb(o.PlanBytes), mb(d.PlanBytes), errStr(o.MaxRelErr, c.tol))
	}
	tw.Flush()
	printGEMMTable(w, rows)
	printONNXTable(w, c, rows)
}

// printONNXTable shows phasec running the .onnx file itself (imported by
// frontend/onnx) against ONNX Runtime and against the hand-written .tvms.
func printONNXTable(w io.Writer, c *config, rows []row) {
	fmt.Fprintf(w, "\nphasec on the .onnx file itself (phasec build MODEL.onnx) vs ONNX Runtime and vs the hand-written .tvms: median ms per run.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tthreads\tORT ms\tfrom .onnx ms\tfrom .onnx/ORT\tcpu ratio\tfrom .onnx/.tvms\terr\t")
	for _, r := range rows {
		o := r.FromONNX
		if o == nil || r.Default == nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\tFAILED\t\t\t\t%s\t\n", r.Model, r.Threads, msStr(r.ORTms), r.Err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2fx\t%.2fx\t%.2fx\t%s\t\n", r.Model, r.Threads, msStr(r.ORTms), msStr(o.MS),
			o.MS/r.ORTms, o.CPUms/r.ORTcpu, o.MS/r.Default.MS, errStr(o.MaxRelErr, c.tol))
	}
	tw.Flush()
}

// printGEMMTable compares each BERT layer with its GEMMs alone (gen.py's
// bert_gemms_sN), phasec's default pipeline on both: the fusion goal is
// that the layer costs at most 1.25x its GEMMs.
func printGEMMTable(w io.Writer, rows []row) {
	type key struct {
		seq     string
		threads int
	}
	gemms := map[key]*timing{}
	for _, r := range rows {
		if seq, ok := strings.CutPrefix(r.Model, "bert_gemms_s"); ok && r.Default != nil {
			gemms[key{seq, r.Threads}] = r.Default
		}
	}
	if len(gemms) == 0 {
		return
	}
	fmt.Fprintf(w, "\nphasec (default pipeline): the BERT layer against its GEMMs alone (bert_gemms_sN; goal of fusion: <= 1.25x).\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seq\tthreads\tlayer ms\tGEMMs ms\tlayer/GEMMs\tcpu layer/GEMMs\t")
	for _, r := range rows {
		seq, ok := strings.CutPrefix(r.Model, "bert_s")
		g := gemms[key{seq, r.Threads}]
		if !ok || r.Default == nil || g == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2fx\t%.2fx\t\n", seq, r.Threads, msStr(r.Default.MS), msStr(g.MS), r.Default.MS/g.MS, r.Default.CPUms/g.CPUms)
	}
	tw.Flush()
}

func msStr(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func errStr(e, tol float64) string {
	s := strconv.FormatFloat(e, 'e', 1, 64)
	if e > tol {
		s += " MISMATCH"
	}
	return s
}

// loadavg is the 1-minute load average (/proc/loadavg), "?" if unknown.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// sameFile says whether two files have the same contents.
func sameFile(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/ort: "+format+"\n", args...)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// run runs a command with its output going to stderr.
func run(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// output runs a command and returns its standard output; its standard error
// goes to ours.
func output(env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(slices.Clone(os.Environ()), env...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return bytes.TrimSpace(stdout.Bytes()), nil
}
