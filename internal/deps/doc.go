// Package deps holds no code, only a test: deps_test.go states, in one
// rule table, which phasec packages each phasec package may import, and
// fails on any import against it, after Go's go/build/deps_test.go.
//
// The table is layered: "a, b < c" lets c import a, b and everything a and
// b may import. Above the runtime line are the packages a program that
// only runs executables links (tensor, vm, vm/abi, vm/blas, vm/kernel,
// vm/loader, ir/tirenc and what they import); below it the compiler. A
// new package gets one rule, placed under the packages it imports.
package deps
