package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel/tunedb"
)

// TestTuneBuildRun: build --tune writes the database, build --tune-db
// and run --tune-db apply it, the tuned executable computes what the
// untuned one does, and a bad database is an error.
func TestTuneBuildRun(t *testing.T) {
	dir := t.TempDir()
	src := "../../testdata/tvm_forms/image_resize2d.tvms"
	db := filepath.Join(dir, "db.json")
	tuned, applied, plain := filepath.Join(dir, "t.pvm"), filepath.Join(dir, "a.pvm"), filepath.Join(dir, "p.pvm")

	code, _, errs := runCLI(t, "", "build", "--tune", "--tune-budget", "2s", "--tune-db", db, "-o", tuned, src)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "tune: searched 1 kernels")
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	d, err := tunedb.Parse(data)
	require.NoError(t, err)
	require.Len(t, d.Records, 1)
	want := 0
	if d.Records[0].Schedule != nil {
		want = 1
	}

	code, _, errs = runCLI(t, "", "build", "--tune-db", db, "-o", applied, src)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "tune: searched", "--tune-db alone searched")
	m := regexp.MustCompile(`tune: (\d+) of \d+ kernels scheduled`).FindStringSubmatch(errs)
	require.NotNil(t, m, errs)
	assert.Equal(t, strconv.Itoa(want), m[1])

	code, _, errs = runCLI(t, "", "build", "-o", plain, src)
	require.Equal(t, 0, code, errs)
	outs := map[string][]byte{}
	for _, pvm := range []string{tuned, applied, plain} {
		npz := pvm + ".npz"
		code, _, errs = runCLI(t, "", "run", "--random-inputs", "-o", npz, pvm)
		require.Equal(t, 0, code, errs)
		outs[pvm], err = os.ReadFile(npz)
		require.NoError(t, err)
	}
	assert.Equal(t, outs[plain], outs[tuned], "the tuned executable computes something else")
	assert.Equal(t, outs[plain], outs[applied], "the applied executable computes something else")

	// run applies a database to an untuned executable.
	code, _, errs = runCLI(t, "", "run", "--random-inputs", "--tune-db", db, plain)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `tune: \d+ of \d+ kernels scheduled`, errs)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 1, "records": [{"hash": 7}]}`), 0o644))
	for _, cmd := range []string{"build", "run"} {
		code, _, errs = runCLI(t, "", cmd, "--tune-db", bad, "-o", filepath.Join(dir, "x"), src)
		assert.Equal(t, 1, code, errs)
		assert.Contains(t, errs, "--tune-db: "+bad+": not a tuning database", errs)
	}
	code, _, errs = runCLI(t, "", "build", "--tune-db", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "x"), src)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "missing.json")
}
