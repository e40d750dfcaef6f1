package syntax

// tvm_names.go is generated from testdata/tvm_relax_signatures.txt, the
// R.* signatures of TVM v0.23; internal/gennames checks it is up to date.
//go:generate go run ./internal/gennames
