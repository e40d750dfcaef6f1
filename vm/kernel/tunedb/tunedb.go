// Package tunedb is the database of tuned general-path schedules (TVM's
// MetaSchedule database and its MetaScheduleApplyDatabase pass, at
// phasec's scale: python/tvm/meta_schedule/database/json_database.py keeps
// one JSON record per workload, keyed by the PrimFunc's structural hash,
// with the best trace and its measured run time; relax's
// MetaScheduleApplyDatabase replaces each PrimFunc found there by its
// scheduled form).
//
// A record holds a PrimFunc's structural hash (ir.StructuralHash of the
// PrimFunc without its attributes, so names and the attributes that carry
// names do not count; shapes do), the schedule the search kept (or none,
// when no candidate beat the untuned kernel) and the measured times. Tune
// searches the kernels of an executable that no fast path takes and adds
// their records; Apply writes each kernel's record schedule into its TIR
// (kernel.ScheduleAttr), where vm/loader finds it at load time, so an
// executable carries its schedules and the runtime never reads the
// database.
//
// Invariants: records are sorted by hash with no duplicates; a database
// file that is not one (bad JSON, an unknown field, a malformed hash, a
// schedule that does not fit the kernel of its hash) is an error naming
// the problem, never a panic.
package tunedb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/tirenc"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/kernel"
)

// Version is the file format version this package reads and writes.
const Version = 1

// Record is one tuned PrimFunc.
type Record struct {
	// Hash is the PrimFunc's structural hash, 16 hex digits (Key).
	Hash string `json:"hash"`
	// Name is the kernel's name when it was tuned (for people only).
	Name string `json:"name"`
	// Schedule is the best schedule, or null when the untuned kernel was
	// best.
	Schedule *kernel.Schedule `json:"schedule"`
	// BaselineNS and BestNS are the untuned and tuned times per call
	// measured on random inputs, in nanoseconds.
	BaselineNS int64 `json:"baseline_ns"`
	BestNS     int64 `json:"best_ns"`
	// Candidates is the number of schedules measured.
	Candidates int `json:"candidates"`
	// Dims are the symbolic dimensions the kernel was measured at.
	Dims map[string]int64 `json:"dims,omitempty"`
}

// DB is a tuning database.
type DB struct {
	Version int      `json:"version"`
	Records []Record `json:"records"`
}

// Key is f's database key: the structural hash of f without attributes.
func Key(f *ir.PrimFunc) string {
	g := *f
	g.Attrs = nil
	return fmt.Sprintf("%016x", ir.StructuralHash(&g))
}

// Parse decodes and checks a database file's contents.
func Parse(data []byte) (*DB, error) {
	var db DB
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&db); err != nil {
		return nil, fmt.Errorf("not a tuning database: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a tuning database: data after the JSON object")
	}
	if db.Version != Version {
		return nil, fmt.Errorf("tuning database version %d, this phasec reads version %d", db.Version, Version)
	}
	for i, r := range db.Records {
		if _, err := strconv.ParseUint(r.Hash, 16, 64); err != nil || len(r.Hash) != 16 {
			return nil, fmt.Errorf("record %d (%s): hash %q is not 16 hex digits", i, r.Name, r.Hash)
		}
		if i > 0 && db.Records[i-1].Hash >= r.Hash {
			return nil, fmt.Errorf("record %d (%s): hash %s is duplicated or out of order", i, r.Name, r.Hash)
		}
	}
	return &db, nil
}

// Load reads a database file; a missing file is an empty database when
// create is set (a first --tune run), else an error.
func Load(path string, create bool) (*DB, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return &DB{Version: Version}, nil
	}
	if err != nil {
		return nil, err
	}
	db, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// Marshal is the database as indented JSON.
func (db *DB) Marshal() []byte {
	b, err := json.MarshalIndent(db, "", "  ")
	if err != nil {
		panic(err) // plain data always marshals
	}
	return append(b, '\n')
}

// Save writes the database to path.
func (db *DB) Save(path string) error { return os.WriteFile(path, db.Marshal(), 0o644) }

// Lookup returns the record of hash.
func (db *DB) Lookup(hash string) (*Record, bool) {
	i, ok := slices.BinarySearchFunc(db.Records, hash, func(r Record, h string) int { return strings.Compare(r.Hash, h) })
	if !ok {
		return nil, false
	}
	return &db.Records[i], true
}

// Put adds or replaces r, keeping the records sorted.
func (db *DB) Put(r Record) {
	i, ok := slices.BinarySearchFunc(db.Records, r.Hash, func(r Record, h string) int { return strings.Compare(r.Hash, h) })
	if ok {
		db.Records[i] = r
		return
	}
	db.Records = slices.Insert(db.Records, i, r)
}

// Apply writes the schedule of every kernel of exe that has a record
// with one into the kernel's TIR (kernel.ScheduleAttr); a kernel without
// a record keeps whatever it had. It returns the number of kernels
// scheduled. A record whose schedule does not fit its kernel is an error.
func Apply(exe *vm.Executable, db *DB) (int, error) {
	n := 0
	for i := range exe.Kernels {
		k := &exe.Kernels[i]
		f, err := tirenc.Decode(k.TIR)
		if err != nil {
			return n, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		r, ok := db.Lookup(Key(f))
		if !ok || r.Schedule == nil {
			continue
		}
		if err := r.Schedule.Validate(f); err != nil {
			return n, fmt.Errorf("kernel %s: database record %s: %w", k.Name, r.Hash, err)
		}
		data, err := tirenc.Encode(kernel.WithSchedule(f, r.Schedule))
		if err != nil {
			return n, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		k.TIR = data
		n++
	}
	return n, nil
}

// Options bound Tune.
type Options struct {
	// Budget is the wall time for all kernels (default 30s), shared
	// equally by the kernels still to tune.
	Budget time.Duration
	// Seed fixes the candidates' order.
	Seed uint64
	// Dims and DefaultDim give symbolic dimensions (kernel.TuneOptions).
	Dims       map[string]int64
	DefaultDim int64
	// Reassociate admits schedules that reorder reductions.
	Reassociate bool
}

// Result reports one kernel's search.
type Result struct {
	Kernel string
	Hash   string
	// Skipped says why the kernel was not tuned ("" when it was).
	Skipped string
	Tune    *kernel.TuneResult
}

// Tune searches schedules for the kernels of exe that no fast path takes
// and that db has no record for, and adds their records to db. Kernels of
// the same structure are tuned once.
func Tune(exe *vm.Executable, db *DB, opts Options) ([]Result, error) {
	if opts.Budget <= 0 {
		opts.Budget = 30 * time.Second
	}
	deadline := time.Now().Add(opts.Budget)
	type job struct {
		at int // index in the results
		f  *ir.PrimFunc
	}
	var jobs []job
	out := make([]Result, len(exe.Kernels))
	seen := map[string]bool{}
	for i := range exe.Kernels {
		k := &exe.Kernels[i]
		f, err := tirenc.Decode(k.TIR)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		f = kernel.WithSchedule(f, nil)
		h := Key(f)
		out[i] = Result{Kernel: k.Name, Hash: h}
		_, tuned := db.Lookup(h)
		switch ok, why := kernel.Tunable(f); {
		case seen[h]:
			out[i].Skipped = "same structure as a kernel above"
		case tuned:
			out[i].Skipped = "in the database"
		case !ok:
			out[i].Skipped = why
		default:
			jobs = append(jobs, job{i, f})
		}
		seen[h] = true
	}
	for ji, j := range jobs {
		r := &out[j.at]
		share := time.Until(deadline) / time.Duration(len(jobs)-ji)
		if share <= 0 {
			r.Skipped = "the budget ran out"
			continue
		}
		res, err := kernel.Tune(j.f, kernel.TuneOptions{Budget: share, Seed: opts.Seed, Dims: opts.Dims,
			DefaultDim: opts.DefaultDim, Reassociate: opts.Reassociate})
		if err != nil {
			r.Skipped = err.Error()
			continue
		}
		r.Tune = res
		db.Put(Record{Hash: r.Hash, Name: r.Kernel, Schedule: res.Schedule, BaselineNS: res.Baseline.Nanoseconds(),
			BestNS: res.Best.Nanoseconds(), Candidates: res.Measured, Dims: usedDims(j.f, opts)})
	}
	return out, nil
}

// usedDims are the symbolic dimensions of f's buffers as measured.
func usedDims(f *ir.PrimFunc, opts Options) map[string]int64 {
	var dims map[string]int64
	for _, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			continue
		}
		for _, d := range b.Shape {
			if v, ok := d.(*ir.PrimVar); ok {
				if dims == nil {
					dims = map[string]int64{}
				}
				n, given := opts.Dims[v.Name]
				if !given {
					n = opts.DefaultDim
					if n <= 0 {
						n = kernel.DefaultDim
					}
				}
				dims[v.Name] = n
			}
		}
	}
	return dims
}
