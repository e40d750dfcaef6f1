package printer

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// Fprint writes exactly Print's text, and reports the writer's error.
func TestFprintWritesPrintText(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            gv = R.add(x, x)
            R.output(gv)
        return gv
`)
	var buf bytes.Buffer
	require.NoError(t, Fprint(&buf, mod))
	require.Equal(t, Print(mod), buf.String())
	require.Contains(t, buf.String(), `gv: R.Tensor((2, 3), dtype="float32") = R.add(x, x)`)
	require.EqualError(t, Fprint(failingWriter{}, mod), "disk full")
}
