//go:build race

package tir_test

const raceEnabled = true
