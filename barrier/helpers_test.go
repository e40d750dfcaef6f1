package barrier_test

import (
	"context"

	"github.com/phasec/phasec/passes"
)

var t0 = context.Background()

func unified(want, got string) string { return passes.UnifiedDiff("want", "got", want, got, 2) }
