package ir

import (
	"slices"
	"strconv"
	"strings"
)

// GlobalInfo is an entry of a module's global infos other than a virtual
// device (those are Module.VDevices): TVM's DummyGlobalInfo
// (I.dummy_global_info(), include/tvm/ir/global_info.h) and the device
// mesh of its distributed dialect (R.device_mesh(shape, device_ids or
// I.Range(begin, end)), include/tvm/relax/distributed/global_info.h).
// phasec has no distributed dialect: it carries these entries as written,
// compares, hashes and prints them, and nothing else reads them.
type GlobalInfo struct {
	Kind GlobalInfoKind
	// Shape is a device mesh's shape.
	Shape []int64
	// DeviceIDs lists a device mesh's devices; nil when Range gives them.
	DeviceIDs []int64
	// Range is a device mesh's [begin, end) device range, when DeviceIDs is nil.
	Range [2]int64
}

// GlobalInfoKind tells the kinds of GlobalInfo apart.
type GlobalInfoKind uint8

const (
	DummyGlobalInfo GlobalInfoKind = iota
	DeviceMesh
)

// GlobalInfoList is one key of a module's global infos and its entries,
// in the order the module lists them (references such as "mesh[0]" index
// into it).
type GlobalInfoList struct {
	Key   string
	Items []*GlobalInfo
}

// Equal reports whether g and o describe the same entry.
func (g *GlobalInfo) Equal(o *GlobalInfo) bool {
	return g.Kind == o.Kind && slices.Equal(g.Shape, o.Shape) && slices.Equal(g.DeviceIDs, o.DeviceIDs) &&
		(g.DeviceIDs != nil) == (o.DeviceIDs != nil) && g.Range == o.Range
}

// String is the entry as TVMScript writes it.
func (g *GlobalInfo) String() string {
	if g.Kind == DummyGlobalInfo {
		return "I.dummy_global_info()"
	}
	var b strings.Builder
	b.WriteString("R.device_mesh((")
	for i, d := range g.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(g.Shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteString("), ")
	if g.DeviceIDs == nil {
		b.WriteString("I.Range(" + strconv.FormatInt(g.Range[0], 10) + ", " + strconv.FormatInt(g.Range[1], 10) + ")")
	} else {
		b.WriteByte('[')
		for i, d := range g.DeviceIDs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteByte(']')
	}
	b.WriteByte(')')
	return b.String()
}

// equalGlobalInfoLists compares two modules' other global infos.
func equalGlobalInfoLists(a, b []GlobalInfoList) bool {
	return slices.EqualFunc(a, b, func(x, y GlobalInfoList) bool {
		return x.Key == y.Key && slices.EqualFunc(x.Items, y.Items, (*GlobalInfo).Equal)
	})
}

// globalInfoListsString formats them for equality failures.
func globalInfoListsString(ls []GlobalInfoList) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(l.Key) + ": [")
		for j, g := range l.Items {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(g.String())
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}
