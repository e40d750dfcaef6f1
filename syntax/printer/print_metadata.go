package printer

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/internal/tvmmeta"
)

// Tensor constants print as TVM's printer prints them with show_meta=True:
// metadata["relax.expr.Constant"][i] where they are used, numbered in order
// of first appearance (IRDocsifierNode::AddMetadata, by identity), and the
// section metadata = tvm.ir.load_json("""...""") above the import comments
// (Docsify, src/script/printer/utils.h). Only scalars of the types
// SpecialScalar (src/script/printer/relax/expr.cc) knows print inline as
// R.const(v, "dtype"). A module read with a section prints it back as read
// when it prints the same constants in the same order; otherwise the
// section is written in the node-graph JSON layout (SaveJSON), which both
// TVM's LoadJSON and phasec read.

// isMetaConstant reports whether c prints as a metadata reference.
func isMetaConstant(c *ir.Constant) bool {
	d := c.Data
	if d == nil {
		return false
	}
	if len(d.Shape) != 0 || d.DType.Lanes > 1 {
		return true
	}
	switch d.DType.Code {
	case ir.CodeInt, ir.CodeUInt:
		return d.DType.Bits != 8 && d.DType.Bits != 16 && d.DType.Bits != 32 && d.DType.Bits != 64
	case ir.CodeFloat:
		return d.DType.Bits != 16 && d.DType.Bits != 32 && d.DType.Bits != 64
	case ir.CodeBool:
		return false
	}
	return true
}

// hasMetaConstants reports whether printing mod writes a metadata section.
func hasMetaConstants(mod *ir.Module) bool {
	found := false
	ir.WalkModule(mod, &ir.Visitor{Expr: func(e ir.Expr) bool {
		if c, ok := e.(*ir.Constant); ok && isMetaConstant(c) {
			found = true
		}
		return !found
	}})
	return found
}

// metaRef writes the reference to c, numbering it on first use.
func (p *printer) metaRef(c *ir.Constant) {
	i, ok := p.metaIndex[c]
	if !ok {
		if p.metaIndex == nil {
			p.metaIndex = map[*ir.Constant]int{}
		}
		i = len(p.meta)
		p.metaIndex[c] = i
		p.meta = append(p.meta, c)
	}
	p.str(`metadata["relax.expr.Constant"][`)
	p.out = strconv.AppendInt(p.out, int64(i), 10)
	p.byte(']')
}

// finishMeta writes the metadata section and then the text held for it.
func (p *printer) finishMeta() {
	if !p.metaPending {
		return
	}
	p.metaPending = false
	held := p.metaHeld
	p.metaHeld = nil
	if len(p.meta) > 0 {
		json := ""
		if m := p.mod.Meta; m != nil && slices.Equal(m.Constants, p.meta) {
			json = m.JSON
		} else {
			json = metadataJSON(p.meta)
		}
		p.write([]byte(`metadata = tvm.ir.load_json("""` + strEscape(json) + `""")` + "\n"))
	}
	for _, c := range held {
		p.write(c)
	}
}

// strEscape escapes s as TVM's support::StrEscape(s, false, false) does
// for the metadata string: quotes and backslashes, other non-printable
// bytes as \xNN; newlines and tabs stay.
func strEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= ' ' && c <= '~', c == '\n', c == '\t', c == '\r':
			b.WriteByte(c)
		default:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(c)&15, 16))
		}
	}
	return b.String()
}

// metadataJSON writes the constants as SaveJSON's node graph: node 0 is
// null, node 1 the root Map, node 2 its Array, then one Constant node per
// constant; the tensors are base64 SaveDLTensor blobs. The layout follows
// dmlc's JSONWriter (", " before each line break, two-space indents).
func metadataJSON(consts []*ir.Constant) string {
	var b strings.Builder
	b.WriteString("{\n  \"root\": 1, \n  \"nodes\": [\n    {\n      \"type_key\": \"\"\n    }, \n")
	b.WriteString("    {\n      \"type_key\": \"Map\", \n      \"keys\": [\n        \"" + tvmmeta.ConstantKey + "\"\n      ], \n      \"data\": [2]\n    }, \n")
	b.WriteString("    {\n      \"type_key\": \"Array\", \n      \"data\": [")
	for i := range consts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(3 + i))
	}
	b.WriteString("]\n    }")
	for i := range consts {
		b.WriteString(", \n    {\n      \"type_key\": \"" + tvmmeta.ConstantKey + "\", \n      \"attrs\": {\n")
		b.WriteString("        \"_checked_type_\": \"0\", \n        \"data\": \"" + strconv.Itoa(i) + "\", \n")
		b.WriteString("        \"span\": \"0\", \n        \"struct_info_\": \"0\"\n      }\n    }")
	}
	b.WriteString("\n  ], \n  \"b64ndarrays\": [")
	for i, c := range consts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("\n    \"")
		b.WriteString(base64.StdEncoding.EncodeToString(tvmmeta.EncodeTensor(c.Data)))
		b.WriteByte('"')
	}
	b.WriteString("\n  ], \n  \"attrs\": {\"tvm_version\": \"0.23.0\"}\n}")
	return b.String()
}
