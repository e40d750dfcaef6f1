//go:build !race

package tir_test

const raceEnabled = false
