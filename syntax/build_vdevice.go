package syntax

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Virtual devices: I.module_global_infos({"vdevice": [I.vdevice(...)]}) in
// the module body, vdevice references in R.Tensor annotations
// (R.Tensor((n,), "float32", "cuda:0")), R.to_vdevice and R.hint_on_device.
// A reference resolves against the module's list as TVM's LookupVDevice
// does (see ir.LookupVDevice).

// moduleGlobalInfos converts I.module_global_infos({...}): "vdevice" lists
// I.vdevice(...) entries (Module.VDevices); any other key lists
// I.dummy_global_info() or device meshes (R.device_mesh, R.dist.device_mesh),
// kept in Module.GlobalInfos. Each list keeps its order, which references
// ("cuda:0", "mesh[0]") depend on.
func (bd *builder) moduleGlobalInfos(a *ast) {
	if len(a.Items) != 1 || a.Keywords[0] != "" || a.Items[0].Kind != aDict {
		bd.fail(a.Span, "expected I.module_global_infos({\"vdevice\": [...]}) with one dict argument")
	}
	if bd.mod.VDevices != nil || bd.mod.GlobalInfos != nil {
		bd.fail(a.Span, "duplicate I.module_global_infos: a module has one global info dictionary")
	}
	d := a.Items[0]
	seen := map[string]bool{}
	for i, k := range d.Items {
		if k.Kind != aStr {
			bd.fail(k.Span, "expected a global info name string, found %s", k.describe())
		}
		if seen[k.Text] {
			bd.fail(k.Span, "duplicate global info key %q", k.Text)
		}
		seen[k.Text] = true
		v := d.Values[i]
		if v.Kind != aList && v.Kind != aTuple {
			bd.fail(v.Span, "expected a list of global infos for %q, found %s", k.Text, v.describe())
		}
		if k.Text == "vdevice" {
			devs := []*ir.VDevice{}
			for _, it := range v.Items {
				devs = append(devs, bd.vdeviceDecl(it))
			}
			bd.mod.VDevices = devs
			continue
		}
		l := ir.GlobalInfoList{Key: k.Text, Items: []*ir.GlobalInfo{}}
		for _, it := range v.Items {
			l.Items = append(l.Items, bd.globalInfo(it))
		}
		bd.mod.GlobalInfos = append(bd.mod.GlobalInfos, l)
	}
}

// globalInfo converts I.dummy_global_info() or R.device_mesh(shape,
// device_ids) with device_ids a list of integers or I.Range(begin, end)
// (python/tvm/relax/distributed/global_info.py).
func (bd *builder) globalInfo(a *ast) *ir.GlobalInfo {
	switch a.callee() {
	case "I.dummy_global_info":
		if len(a.Items) != 0 {
			bd.fail(a.Span, "I.dummy_global_info() takes no arguments")
		}
		return &ir.GlobalInfo{Kind: ir.DummyGlobalInfo}
	case "R.device_mesh", "R.dist.device_mesh":
		args := bd.callArgs(a, "shape", "device_ids")
		shape, ids := args.get("shape"), args.get("device_ids")
		if shape == nil || ids == nil {
			bd.fail(a.Span, "expected R.device_mesh(shape, device_ids)")
		}
		g := &ir.GlobalInfo{Kind: ir.DeviceMesh, Shape: bd.int64List(shape)}
		if ids.Kind == aCall && ids.callee() == "I.Range" {
			if len(ids.Items) != 2 {
				bd.fail(ids.Span, "expected I.Range(begin, end)")
			}
			g.Range = [2]int64{int64(bd.intLiteral(ids.Items[0])), int64(bd.intLiteral(ids.Items[1]))}
			if g.Range[1] < g.Range[0] {
				bd.fail(ids.Span, "device range [%d, %d) is empty", g.Range[0], g.Range[1])
			}
		} else {
			g.DeviceIDs = bd.int64List(ids)
		}
		n := int64(1)
		for _, s := range g.Shape {
			n *= s
		}
		have := int64(len(g.DeviceIDs))
		if g.DeviceIDs == nil {
			have = g.Range[1] - g.Range[0]
		}
		if n != have {
			bd.fail(a.Span, "device mesh of shape %v needs %d devices, found %d", g.Shape, n, have)
		}
		return g
	}
	bd.fail(a.Span, "unsupported global info: %s (phasec knows I.vdevice, I.dummy_global_info and R.device_mesh)", a.describe())
	return nil
}

// int64List converts a list or tuple of non-negative integer literals.
func (bd *builder) int64List(a *ast) []int64 {
	if a.Kind != aList && a.Kind != aTuple {
		bd.fail(a.Span, "expected a list of integers, found %s", a.describe())
	}
	out := make([]int64, 0, len(a.Items))
	for _, it := range a.Items {
		v := bd.intLiteral(it)
		if v < 0 {
			bd.fail(it.Span, "expected a non-negative integer, found %d", v)
		}
		out = append(out, int64(v))
	}
	return out
}

// vdeviceDecl converts I.vdevice(target, vdevice_id=0, memory_scope="global").
// The target is a string or the config dict TVM prints.
func (bd *builder) vdeviceDecl(a *ast) *ir.VDevice {
	if a.callee() != "I.vdevice" {
		bd.fail(a.Span, "expected I.vdevice(target, vdevice_id, memory_scope), found %s", a.describe())
	}
	args := bd.callArgs(a, "target", "vdevice_id", "memory_scope")
	d := &ir.VDevice{Scope: "global"}
	switch t := args.get("target"); {
	case t == nil || isNone(t):
		bd.fail(a.Span, "I.vdevice(...) needs a target (a string such as \"llvm\" or a target config dict)")
	case t.Kind == aStr:
		d.Target = t.Text
	case t.Kind == aDict:
		cfg := bd.attrDict(t)
		if _, ok := cfg["kind"].(string); !ok {
			bd.fail(t.Span, "a target config needs a \"kind\" string")
		}
		d.Target = cfg
	default:
		bd.fail(t.Span, "expected a target string or config dict, found %s", t.describe())
	}
	if id := args.get("vdevice_id"); id != nil {
		d.ID = int64(bd.intLiteral(id))
	}
	if s := args.get("memory_scope"); s != nil {
		if s.Kind != aStr {
			bd.fail(s.Span, "expected a memory scope string, found %s", s.describe())
		}
		d.Scope = s.Text
	}
	return d
}

// vdeviceRef resolves a reference: "kind", "kind:i", "vdevice:i", or an
// I.vdevice(...) equal to one of the module's devices. None gives nil.
func (bd *builder) vdeviceRef(a *ast) *ir.VDevice {
	if isNone(a) {
		return nil
	}
	if a.Kind == aCall && a.callee() == "I.vdevice" {
		d := bd.vdeviceDecl(a)
		for _, x := range bd.mod.VDevices {
			if x.Equal(d) {
				return x
			}
		}
		return d
	}
	if a.Kind != aStr {
		bd.fail(a.Span, "expected a virtual device such as \"cuda:0\", found %s", a.describe())
	}
	d, msg := ir.LookupVDevice(bd.mod.VDevices, a.Text)
	if msg != "" {
		bd.fail(a.Span, "%s", msg)
	}
	return d
}

// toVDevice converts R.to_vdevice(data, dst_vdevice).
func (bd *builder) toVDevice(a *ast) ir.Expr {
	args := bd.callArgs(a, "data", "dst_vdevice")
	if args.get("data") == nil || args.get("dst_vdevice") == nil {
		bd.fail(a.Span, "expected R.to_vdevice(data, dst_vdevice)")
	}
	data := bd.relaxExpr(args.get("data"))
	dev := bd.vdeviceRef(args.get("dst_vdevice"))
	if dev == nil {
		bd.fail(args.get("dst_vdevice").Span, "virtual device %s is not declared in the module's I.module_global_infos", args.get("dst_vdevice").describe())
	}
	c := &ir.Call{Op: op.ToVDevice, Args: []ir.Expr{data}, Attrs: ir.Attrs{"dst_vdevice": dev}}
	c.SetSpan(a.Span)
	return c
}

// hintOnDevice converts R.hint_on_device(data, dst_vdevice,
// memory_scope="global"); dst_vdevice is a device: R.device(dev_type,
// dev_id=0) or R.cpu(0), R.cuda(0), ...
func (bd *builder) hintOnDevice(a *ast) ir.Expr {
	args := bd.callArgs(a, "data", "dst_vdevice", "memory_scope")
	if args.get("data") == nil || args.get("dst_vdevice") == nil {
		bd.fail(a.Span, "expected R.hint_on_device(data, dst_vdevice, memory_scope)")
	}
	data := bd.relaxExpr(args.get("data"))
	devType, devID := bd.deviceLiteral(args.get("dst_vdevice"))
	scope := "global"
	if s := args.get("memory_scope"); s != nil {
		if s.Kind != aStr {
			bd.fail(s.Span, "expected a memory scope string, found %s", s.describe())
		}
		scope = s.Text
	}
	c := &ir.Call{Op: op.HintOnDevice, Args: []ir.Expr{data},
		Attrs: ir.Attrs{"dev_type": devType, "dev_id": devID, "memory_scope": scope}}
	c.SetSpan(a.Span)
	return c
}

// deviceTypes are the DLPack device type codes of the names TVM's
// tvm.runtime.device accepts (python/tvm/runtime/_ffi_api / device.py) and of
// the R.cpu, R.cuda, ... shorthands.
var deviceTypes = map[string]int64{
	"cpu": 1, "llvm": 1, "c": 1, "cuda": 2, "nvptx": 2, "cl": 4, "opencl": 4,
	"vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10, "ext_dev": 12, "webgpu": 15, "hexagon": 16,
}

// deviceLiteral converts R.device(dev_type, dev_id=0) (dev_type a code or
// a name) or R.<name>(dev_id=0).
func (bd *builder) deviceLiteral(a *ast) (devType, devID int64) {
	callee := a.callee()
	if a.Kind != aCall {
		bd.fail(a.Span, "expected a device such as R.device(dev_type=1, dev_id=0) or R.cpu(0), found %s", a.describe())
	}
	var args namedArgs
	if callee == "R.device" {
		args = bd.callArgs(a, "dev_type", "dev_id")
		t := args.get("dev_type")
		switch {
		case t == nil:
			bd.fail(a.Span, "R.device(...) needs a dev_type")
		case t.Kind == aStr:
			code, ok := deviceTypes[t.Text]
			if !ok {
				bd.fail(t.Span, "unknown device type %q", t.Text)
			}
			devType = code
		default:
			devType = int64(bd.intLiteral(t))
		}
	} else {
		code, ok := deviceTypes[callee[len("R."):]]
		if !ok || len(callee) < 2 || callee[:2] != "R." {
			bd.fail(a.Span, "expected a device such as R.device(dev_type=1, dev_id=0) or R.cpu(0), found %s", a.describe())
		}
		devType = code
		args = bd.callArgs(a, "dev_id")
	}
	if id := args.get("dev_id"); id != nil {
		devID = int64(bd.intLiteral(id))
	}
	return devType, devID
}
