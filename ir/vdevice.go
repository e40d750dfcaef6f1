package ir

import (
	"strconv"
	"strings"
)

// VDevice is a virtual device (TVM's VDevice, include/tvm/ir/global_info.h):
// a target, a device id and a memory scope. A module lists its virtual
// devices in its global infos (I.module_global_infos({"vdevice": [...]}));
// a TensorInfo may name one of them.
//
// phasec does not model TVM's Target: Target is what the text gave, either
// a target string ("llvm", "cuda -arch=sm_80") or the exported target config
// TVM prints (an Attrs with at least "kind"), and it prints back unchanged.
type VDevice struct {
	Target any // string or Attrs
	ID     int64
	Scope  string
}

// Kind is the target kind: the "kind" entry of a config, or the first word
// of a target string.
func (v *VDevice) Kind() string {
	switch t := v.Target.(type) {
	case string:
		kind, _, _ := strings.Cut(strings.TrimSpace(t), " ")
		return kind
	case Attrs:
		if k, ok := t["kind"].(string); ok {
			return k
		}
	}
	return ""
}

// DLDeviceType is the DLPack device type of the target kind, as TVM's
// Target::GetTargetDeviceType (kDLCPU for llvm and c, kDLCUDA for cuda,
// ...); 0 for a kind it does not know.
func (v *VDevice) DLDeviceType() int64 {
	switch v.Kind() {
	case "llvm", "c":
		return 1
	case "cuda", "nvptx":
		return 2
	case "opencl":
		return 4
	case "vulkan":
		return 7
	case "metal":
		return 8
	case "rocm":
		return 10
	case "ext_dev":
		return 12
	case "hexagon":
		return 16
	case "webgpu":
		return 15
	}
	return 0
}

// Equal reports whether v and w are the same device: equal targets, ids and
// scopes (TVM's StructInfoBaseCheck compares these three).
func (v *VDevice) Equal(w *VDevice) bool {
	if v == w {
		return true
	}
	if v == nil || w == nil {
		return false
	}
	return v.ID == w.ID && v.Scope == w.Scope && attrsDeepEqual(v.Target, w.Target)
}

// String is the I.vdevice(...) call TVM prints.
func (v *VDevice) String() string {
	return "I.vdevice(" + FormatAttrValue(v.Target) + ", " + strconv.FormatInt(v.ID, 10) + ", " + strconv.Quote(v.Scope) + ")"
}

// sameVDevice compares optional devices.
func sameVDevice(a, b *VDevice) bool { return a.Equal(b) }

// VDeviceRef spells a reference to d as TVM's printer does
// (src/script/printer/relax/struct_info.cc, FindVDeviceIndexByTargetKind):
// "<kind>:<i>" where i counts the devices of the same kind before d in list;
// -1 when d is not in list.
func VDeviceRef(list []*VDevice, d *VDevice) string {
	kind := d.Kind()
	idx := -1
	n := 0
	for _, x := range list {
		if x == d || x.Equal(d) {
			idx = n
			break
		}
		if x.Kind() == kind {
			n++
		}
	}
	return kind + ":" + strconv.Itoa(idx)
}

// LookupVDevice resolves a vdevice annotation as TVM's parser does
// (src/script/ir_builder/ir/ir.cc, LookupVDevice): "kind:i" is the i-th
// device of that kind, "vdevice:i" the i-th device of the list, a bare
// "kind" means "kind:0". It reports an error message when i is outside the
// list (TVM's fatal error); a kind with fewer devices gives nil (TVM warns
// and leaves the tensor without a device).
func LookupVDevice(list []*VDevice, ref string) (*VDevice, string) {
	kind, idxText, hasIdx := strings.Cut(ref, ":")
	idx := 0
	if hasIdx {
		i, err := strconv.Atoi(idxText)
		if err != nil {
			return nil, "expected a virtual device reference \"kind:index\", found " + strconv.Quote(ref)
		}
		idx = i
	}
	if len(list) == 0 {
		return nil, "the module declares no virtual devices (add I.module_global_infos({\"vdevice\": [...]}))"
	}
	if idx < 0 || idx >= len(list) {
		return nil, "virtual device " + strconv.Quote(ref) + " not found: the module declares " + strconv.Itoa(len(list)) + " virtual devices"
	}
	if kind == "vdevice" {
		return list[idx], ""
	}
	n := 0
	for _, d := range list {
		if d.Kind() == kind {
			if n == idx {
				return d, ""
			}
			n++
		}
	}
	return nil, ""
}

// inheritVDevice gives an op's inferred tensor results the virtual device of
// its tensor operands when they agree on one: TVM's inference functions
// build their results with the input's vdevice (src/relax/op/op_common.h,
// InferBinaryArithOpOutVDevice and the per-op TensorStructInfo(..., vdevice)
// constructors). Results that already name a device (R.to_vdevice) and ops
// whose operands disagree or carry none are left as inferred.
func inheritVDevice(c *Call, s StructInfo) StructInfo {
	var dev *VDevice
	for _, a := range c.Args {
		t, ok := a.StructInfo().(*TensorInfo)
		if !ok || t.VDevice == nil {
			continue
		}
		if dev != nil && !dev.Equal(t.VDevice) {
			return s
		}
		dev = t.VDevice
	}
	if dev == nil {
		return s
	}
	withDev := func(s StructInfo) StructInfo {
		t, ok := s.(*TensorInfo)
		if !ok || t.VDevice != nil {
			return s
		}
		nt := *t
		nt.VDevice = dev
		return &nt
	}
	if tu, ok := s.(*TupleInfo); ok {
		if fields, changed := mapList(tu.Fields, withDev); changed {
			return &TupleInfo{Fields: fields}
		}
		return s
	}
	return withDev(s)
}
