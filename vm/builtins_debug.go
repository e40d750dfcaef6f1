package vm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/phasec/phasec/vm/abi"
)

// The debug builtins LegalizeOps makes of R.print and R.assert_op (TVM
// registers them as relax.run.print and relax.run.assert_op in
// python/tvm/relax/op/base.py): a Python-style "{}" format string, then the
// values.

func init() {
	mustRegister(&Builtin{Name: abi.BuiltinPrint, MinArgs: 1, MaxArgs: -1, Fn: runPrint})
	mustRegister(&Builtin{Name: abi.BuiltinAssertOp, MinArgs: 2, MaxArgs: -1, Fn: runAssert})
}

// formatValues renders the "{}" placeholders of format with vals; with no
// placeholders, the values follow the format separated by spaces.
func formatValues(format string, vals []Value) string {
	if !strings.Contains(format, "{}") {
		parts := []string{}
		if format != "" {
			parts = append(parts, format)
		}
		for _, v := range vals {
			parts = append(parts, displayValue(v))
		}
		return strings.Join(parts, " ")
	}
	var b strings.Builder
	for i := 0; ; i++ {
		before, after, ok := strings.Cut(format, "{}")
		b.WriteString(before)
		if !ok {
			break
		}
		if i < len(vals) {
			b.WriteString(displayValue(vals[i]))
		} else {
			b.WriteString("{}")
		}
		format = after
	}
	return b.String()
}

func displayValue(v Value) string {
	if t, ok := v.Tensor(); ok {
		return Preview(t, 16)
	}
	if s, ok := v.Str(); ok {
		return s
	}
	return v.String()
}

func (m *Machine) stdout() io.Writer {
	if m.vm.opts.Stdout != nil {
		return m.vm.opts.Stdout
	}
	return os.Stdout
}

// relax.run.print(format, values...).
func runPrint(m *Machine, a []Value) (Value, error) {
	format, _ := a[0].Str()
	fmt.Fprintln(m.stdout(), formatValues(format, a[1:]))
	return Value{}, nil
}

// relax.run.assert_op(condition, format, values...).
func runAssert(_ *Machine, a []Value) (Value, error) {
	cond, err := readIfCond(nil, a[:1])
	if err != nil {
		return Value{}, fmt.Errorf("assert_op: %w", err)
	}
	if cond.i != 0 {
		return Value{}, nil
	}
	format, _ := a[1].Str()
	msg := formatValues(format, a[2:])
	if msg == "" {
		msg = "Assertion Failed"
	}
	return Value{}, errors.New(msg)
}
