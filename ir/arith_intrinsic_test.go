package ir

import (
	"strings"
	"testing"
)

func TestIntrinsicTable(t *testing.T) {
	for _, name := range []string{"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "fabs", "pow",
		"floor", "ceil", "if_then_else", "max_value", "min_value", "ret"} {
		in, ok := LookupIntrinsic(name)
		if !ok {
			t.Errorf("T.%s is not registered", name)
			continue
		}
		if in.Name != name || in.Doc == "" || in.MinArgs < 1 {
			t.Errorf("T.%s: incomplete entry %+v", name, in)
		}
	}
	for _, name := range []string{"max", "min", "floordiv", "floormod", "Cast", "nope"} {
		if _, ok := LookupIntrinsic(name); ok {
			t.Errorf("T.%s must not be a PrimCall intrinsic", name)
		}
	}
	all := Intrinsics()
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("Intrinsics not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
}

func TestIntrinsicResultType(t *testing.T) {
	x := NewPrimVar("x", Float32)
	h := NewPrimVar("h", Float16)
	n := SymVar("n")
	c := NewPrimVar("c", Bool)
	cases := []struct {
		name    string
		args    []PrimExpr
		want    DataType
		wantErr string
	}{
		{"exp", []PrimExpr{x}, Float32, ""},
		{"sqrt", []PrimExpr{h}, Float16, ""},
		{"pow", []PrimExpr{x, x}, Float32, ""},
		{"fabs", []PrimExpr{n}, Int64, ""},
		{"if_then_else", []PrimExpr{c, n, n}, Int64, ""},
		{"max_value", []PrimExpr{&PrimStr{Value: "float16"}}, Float16, ""},
		{"ret", []PrimExpr{n}, Int64, ""},
		{"exp", []PrimExpr{x, x}, Void, "takes 1 argument(s), got 2"},
		{"pow", []PrimExpr{x}, Void, "takes 2 argument(s), got 1"},
		{"exp", []PrimExpr{n}, Void, "want a float type"},
		{"if_then_else", []PrimExpr{n, x, x}, Void, "want bool"},
		{"if_then_else", []PrimExpr{c, x, n}, Void, "arms have types"},
		{"max_value", []PrimExpr{n}, Void, "must be a dtype string"},
		{"max_value", []PrimExpr{&PrimStr{Value: "float7"}}, Void, "unknown dtype"},
	}
	for _, tc := range cases {
		call, err := NewIntrinsicCall(tc.name, tc.args...)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("T.%s%v: err = %v, want %q", tc.name, tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("T.%s%v: unexpected error %v", tc.name, tc.args, err)
		case call.DType() != tc.want || call.Op != tc.name:
			t.Errorf("T.%s%v: got %s %s, want dtype %s", tc.name, tc.args, call.Op, call.DType(), tc.want)
		}
	}
	if _, err := NewIntrinsicCall("nope"); err == nil {
		t.Error("unknown intrinsic accepted")
	}
}
