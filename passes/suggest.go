package passes

import (
	"fmt"

	"github.com/phasec/phasec/diag"
)

// unknownName builds the "unknown X "name" (did you mean "Y"?)" error.
func unknownName(what, name string, known []string) error {
	if s := diag.Closest(name, known); s != "" {
		return fmt.Errorf("unknown %s %q (did you mean %q?)", what, name, s)
	}
	return fmt.Errorf("unknown %s %q", what, name)
}
