package tir

import "github.com/phasec/phasec/ir"

func (c *compiler) compileVector(s *ir.For, lo, ext iexpr, slot int) (stmt, bool) {
	return nil, false
}
