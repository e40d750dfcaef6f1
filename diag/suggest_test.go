package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	cands := []string{"R.nn.relu", "R.nn.gelu", "R.add", "ToNonDataflow", "CallTIRRewrite"}
	tests := []struct{ name, want string }{
		{"R.nn.rleu", "R.nn.relu"}, // a swapped pair is one edit
		{"R.ad", "R.add"},
		{"tononDataflow", "ToNonDataflow"}, // case is ignored
		{"CallTIRRewrit", "CallTIRRewrite"},
		{"R.matmul", ""},           // nothing near enough
		{"R.add", ""},              // the name itself is not a suggestion
		{"R.nn.xelu", "R.nn.gelu"}, // tie (gelu, relu) broken by the smaller name
		{"R.nn.rel", "R.nn.relu"},
		{"R.totally_else", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Closest(tt.name, cands), "Closest(%q)", tt.name)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"kitten", "sitting", 3}, {"relu", "rleu", 1}, {"", "abc", 3}, {"same", "same", 0}} {
		assert.Equal(t, tt.want, editDistance(tt.a, tt.b), "editDistance(%q, %q)", tt.a, tt.b)
	}
}
