package printer

import (
	"strconv"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Virtual devices in TVM's printed forms (src/script/printer/ir/ir.cc for
// the module's global infos, src/script/printer/relax/call.cc for
// R.hint_on_device; references print as "kind:i", see ir.VDeviceRef).

var opHintOnDevice = op.HintOnDevice

// moduleGlobalInfos writes I.module_global_infos({"vdevice": [...], ...})
// and ends the line: the virtual devices first, then the other global infos
// in the module's order.
func (p *printer) moduleGlobalInfos() {
	p.str("I.module_global_infos({")
	sep := ""
	if len(p.mod.VDevices) > 0 {
		p.str(`"vdevice": [`)
		for i, d := range p.mod.VDevices {
			if i > 0 {
				p.str(", ")
			}
			p.str("I.vdevice(")
			p.attrValue(d.Target)
			p.str(", ")
			p.out = strconv.AppendInt(p.out, d.ID, 10)
			p.str(", ")
			p.quote(d.Scope)
			p.byte(')')
		}
		p.byte(']')
		sep = ", "
	}
	for _, l := range p.mod.GlobalInfos {
		p.str(sep)
		sep = ", "
		p.quote(l.Key)
		p.str(": [")
		for i, g := range l.Items {
			if i > 0 {
				p.str(", ")
			}
			p.str(g.String())
		}
		p.byte(']')
	}
	p.str("})\n")
}

// hintOnDevice writes R.hint_on_device(x, R.device(dev_type=t, dev_id=i),
// "scope"), TVM's PrintHintOnDevice.
func (p *printer) hintOnDevice(c *ir.Call) {
	p.str("R.hint_on_device(")
	p.expr(c.Args[0])
	p.str(", R.device(dev_type=")
	p.attrValue(c.Attrs["dev_type"])
	p.str(", dev_id=")
	p.attrValue(c.Attrs["dev_id"])
	p.str("), ")
	p.attrValue(c.Attrs["memory_scope"])
	p.byte(')')
}
