package diag

import "testing"

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
		if got := Closest(tt.name, cands); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"kitten", "sitting", 3}, {"relu", "rleu", 1}, {"", "abc", 3}, {"same", "same", 0}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
