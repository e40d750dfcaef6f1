package passes

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		got := pc.Gate(tt.info)
		assert.Equal(t, tt.want, got.Kind, "Gate(%s) at O%d required=%v disabled=%v = %v", tt.info.Name, tt.level, tt.required, tt.disabled, got)
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
	require.Nil(t, errs)
	for _, tt := range tests {
		var ran []string
		pc := &PassContext{OptLevel: tt.level, Required: tt.required, Disabled: tt.disabled,
			Trace: func(_ *ir.Module, info *Info, before bool) {
				if before {
					ran = append(ran, info.Name)
				}
			}}
		_, err := pc.Run(context.Background(), p, genModule(1, 2))
		require.NoError(t, err)
		assert.Equal(t, tt.want, ran, "O%d required=%v disabled=%v", tt.level, tt.required, tt.disabled)
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
		assert.Contains(t, got, want, "Validate")
	}
	assert.Nil(t, NewPassContext().Validate(), "default context invalid")
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
		require.NoError(t, err)
		got, _ := out.Attrs.Int("depth")
		assert.Equal(t, tt.want, got, "config %v: depth", tt.config)
	}
	k, v, err := ParseConfig("test.depth=12")
	assert.NoError(t, err, "ParseConfig")
	assert.Equal(t, "test.depth", k, "ParseConfig key")
	assert.Equal(t, int64(12), v, "ParseConfig value")
	_, _, err = ParseConfig("test.deep=1")
	assert.ErrorContains(t, err, `did you mean "test.depth"`, "ParseConfig unknown key")
	_, _, err = ParseConfig("test.depth=x")
	assert.Error(t, err, "ParseConfig accepted a non-int")
}
