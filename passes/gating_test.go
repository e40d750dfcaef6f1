package passes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
)

// TestGate is the TVM gating table: disabled > required > opt level.
func TestGate(t *testing.T) {
	o1 := &Info{Name: "TO1", OptLevel: 1}
	always := &Info{Name: "TLowerBarrier", AlwaysRun: true}
	tests := []struct {
		info     *Info
		level    int
		required []string
		disabled []string
		want     ReasonKind
	}{
		{o1, 0, nil, nil, BelowOptLevel},
		{o1, 1, nil, nil, InPipeline},
		{o1, 3, nil, nil, InPipeline},
		{o1, 0, []string{"TO1"}, nil, Required},
		{o1, 3, nil, []string{"TO1"}, Disabled},
		{o1, 0, []string{"TO1"}, []string{"TO1"}, Disabled},
		{o1, 3, []string{"TO1"}, []string{"TO1"}, Disabled},
		{o1, 0, []string{"TNoop"}, []string{"TO3"}, BelowOptLevel},
		{always, 0, nil, nil, AlwaysRuns},
		{always, 0, []string{"TLowerBarrier"}, nil, Required},
	}
	for _, tt := range tests {
		pc := &PassContext{OptLevel: tt.level, Required: tt.required, Disabled: tt.disabled}
		if got := pc.Gate(tt.info); got.Kind != tt.want {
			t.Errorf("Gate(%s) at O%d required=%v disabled=%v = %v, want kind %d", tt.info.Name, tt.level, tt.required, tt.disabled, got, tt.want)
		}
	}
}

// TestGatingRun checks which passes actually execute, opt level × lists.
func TestGatingRun(t *testing.T) {
	tests := []struct {
		level              int
		required, disabled []string
		want               []string
	}{
		{0, nil, nil, []string{"TNoop"}},
		{1, nil, nil, []string{"TNoop", "TO1"}},
		{2, nil, nil, []string{"TNoop", "TO1"}},
		{3, nil, nil, []string{"TNoop", "TO1", "TO3"}},
		{0, []string{"TO3"}, nil, []string{"TNoop", "TO3"}},
		{3, nil, []string{"TO1", "TNoop"}, []string{"TO3"}},
		{3, []string{"TO1"}, []string{"TO1"}, []string{"TNoop", "TO3"}},
	}
	p, errs := parseAndBuild("--passes", "TNoop,TO1,TO3")
	if errs != nil {
		t.Fatal(errs)
	}
	for _, tt := range tests {
		var ran []string
		pc := &PassContext{OptLevel: tt.level, Required: tt.required, Disabled: tt.disabled,
			Trace: func(_ *ir.Module, info *Info, before bool) {
				if before {
					ran = append(ran, info.Name)
				}
			}}
		if _, err := pc.Run(context.Background(), p, genModule(1, 2)); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ran, tt.want) {
			t.Errorf("O%d required=%v disabled=%v ran %v, want %v", tt.level, tt.required, tt.disabled, ran, tt.want)
		}
	}
}

func TestValidateContext(t *testing.T) {
	pc := &PassContext{OptLevel: 4, Required: []string{"TNop"}, Disabled: []string{"TLowerBarrier"}, Registry: testRegistry,
		Config: map[string]any{"test.dept": int64(1), "test.depth": "x"}}
	got := pc.Validate().Error()
	for _, want := range []string{
		"opt level 4 outside 0..3",
		`required: unknown pass "TNop" (did you mean "TNoop"?)`,
		"pass TLowerBarrier cannot be disabled",
		`unknown config key "test.dept" (did you mean "test.depth"?)`,
		"config test.depth wants a int, got x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Validate lacks %q:\n%s", want, got)
		}
	}
	if errs := NewPassContext().Validate(); errs != nil {
		t.Errorf("default context invalid: %v", errs)
	}
}

func TestConfig(t *testing.T) {
	p := testPass("TReadConfig")
	for _, tt := range []struct {
		config map[string]any
		want   int64
	}{{nil, 3}, {map[string]any{"test.depth": 7}, 7}} {
		pc := NewPassContext()
		pc.Config = tt.config
		out, err := pc.Run(context.Background(), p, genModule(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := out.Attrs.Int("depth"); got != tt.want {
			t.Errorf("config %v: depth %d, want %d", tt.config, got, tt.want)
		}
	}
	if k, v, err := ParseConfig("test.depth=12"); err != nil || k != "test.depth" || v != int64(12) {
		t.Errorf("ParseConfig = %q %v %v", k, v, err)
	}
	if _, _, err := ParseConfig("test.deep=1"); err == nil || !strings.Contains(err.Error(), `did you mean "test.depth"`) {
		t.Errorf("ParseConfig unknown key: %v", err)
	}
	if _, _, err := ParseConfig("test.depth=x"); err == nil {
		t.Error("ParseConfig accepted a non-int")
	}
}
