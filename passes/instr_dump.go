package passes

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/phasec/phasec/ir"
)

// DumpDir writes the input module as 000_input.tvms and the module after
// each pass as NNN_<phase>_<pass>.tvms (phase after the pass) into Dir,
// numbered in run order, so `ls` shows the pipeline and `diff` compares
// any two steps. Sequentials are not dumped.
type DumpDir struct {
	BaseInstrument
	Dir   string
	Print Printer
	n     int
}

func (*DumpDir) ChangeBlind() {}
func (*DumpDir) InputBlind()  {}

func (*DumpDir) Name() string { return "dump-dir" }

func (d *DumpDir) EnterContext(*PassContext) error {
	d.n = 0
	return os.MkdirAll(d.Dir, 0o755)
}

func (d *DumpDir) write(name string, m *ir.Module) error {
	path := filepath.Join(d.Dir, fmt.Sprintf("%03d_%s.tvms", d.n, name))
	d.n++
	return os.WriteFile(path, []byte(d.Print.print(m)), 0o644)
}

func (d *DumpDir) BeforePass(ev *Event) error {
	if d.n == 0 && ev.Pass.kind != KindSequential {
		return d.write("input", ev.Before)
	}
	return nil
}

func (d *DumpDir) AfterPass(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	return d.write(ev.PhaseAfter.String()+"_"+ev.Info.Name, ev.After)
}
