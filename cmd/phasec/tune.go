package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/kernel"
	"github.com/phasec/phasec/vm/kernel/tunedb"

	"github.com/spf13/pflag"
)

// tuneFlags are build's and run's schedule-search flags (issue 23):
// --tune searches general-path schedules for the kernels no fast path
// takes, --tune-db FILE keeps them across runs, and the chosen schedules
// travel in the executable's kernels (vm/kernel/tunedb.Apply).
type tuneFlags struct {
	tune   *bool
	budget *time.Duration
	db     *string
	// dims are the symbolic dimensions kernels are measured at (run's
	// --symbolic); others are kernel.DefaultDim.
	dims map[string]int64
}

func addTuneFlags(fs *pflag.FlagSet) *tuneFlags {
	return &tuneFlags{
		tune:   fs.Bool("tune", false, "measure general-path schedules for the kernels no fast path takes and keep the best (in --tune-db when given)"),
		budget: fs.Duration("tune-budget", 30*time.Second, "wall time of --tune for all kernels"),
		db:     fs.String("tune-db", "", "the tuning database `FILE` (JSON): --tune adds to it; without --tune its schedules are applied"),
	}
}

// apply tunes exe's kernels (--tune) and writes the database's schedules
// into them; it reports on stderr and returns false after an error.
func (tf *tuneFlags) apply(exe *vm.Executable, stderr io.Writer) bool {
	if !*tf.tune && *tf.db == "" {
		return true
	}
	db := &tunedb.DB{Version: tunedb.Version}
	if *tf.db != "" {
		var err error
		if db, err = tunedb.Load(*tf.db, *tf.tune); err != nil {
			fmt.Fprintf(stderr, "phasec: --tune-db: %v\n", err)
			return false
		}
	}
	if *tf.tune {
		start := time.Now()
		results, err := tunedb.Tune(exe, db, tunedb.Options{Budget: *tf.budget, Dims: tf.dims})
		if err != nil {
			fmt.Fprintf(stderr, "phasec: --tune: %v\n", err)
			return false
		}
		printTuning(stderr, results, time.Since(start))
		if *tf.db != "" {
			if err := db.Save(*tf.db); err != nil {
				fmt.Fprintf(stderr, "phasec: --tune-db: %v\n", err)
				return false
			}
			fmt.Fprintf(stderr, "tune: wrote %s (%d records)\n", *tf.db, len(db.Records))
		}
	}
	n, err := tunedb.Apply(exe, db)
	if err != nil {
		fmt.Fprintf(stderr, "phasec: --tune-db: %v\n", err)
		return false
	}
	fmt.Fprintf(stderr, "tune: %d of %d kernels scheduled\n", n, len(exe.Kernels))
	return true
}

// printTuning reports each searched kernel and the fast-path count.
func printTuning(w io.Writer, results []tunedb.Result, elapsed time.Duration) {
	searched, fast := 0, 0
	for _, r := range results {
		if r.Tune == nil {
			if strings.HasPrefix(r.Skipped, kernel.FastPathReason) {
				fast++
			} else {
				fmt.Fprintf(w, "tune: %-28s skipped: %s\n", r.Kernel, r.Skipped)
			}
			continue
		}
		searched++
		t := r.Tune
		kept := "untuned kept"
		if t.Schedule != nil {
			kept = t.Schedule.String()
		}
		fmt.Fprintf(w, "tune: %-28s untuned %10v  tuned %10v  %5.2fx  %3d candidates  %s\n",
			r.Kernel, t.Baseline, t.Best, float64(t.Baseline)/float64(t.Best), t.Measured, kept)
	}
	fmt.Fprintf(w, "tune: searched %d kernels in %v (%d on fast paths)\n", searched, elapsed.Round(time.Millisecond), fast)
}
