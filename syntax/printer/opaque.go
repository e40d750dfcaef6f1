package printer

import "github.com/phasec/phasec/ir"

// isOpaqueOp reports whether op is an opaque op the parser made up for a
// TVM name phasec has no op for (syntax/build_opaque.go marks it in
// Op.Extra under this key). Such a call prints its sinfo_args as the
// binding's annotation, as it was written.
//
// Temporary: issue 19 part 3 makes this the op's own Opaque field; when it
// lands, calls become op.Opaque and this file goes.
func isOpaqueOp(op *ir.Op) bool {
	v, _ := op.Extra["syntax.opaque"].(bool)
	return v
}
