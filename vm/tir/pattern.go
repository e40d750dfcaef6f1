package tir

import "github.com/phasec/phasec/ir"

func (c *compiler) dispatch(f *ir.PrimFunc) (string, fastPath) {
	return "general", nil
}
