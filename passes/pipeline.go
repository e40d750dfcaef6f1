package passes

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/diag"
)

// Textual pipelines. The grammar (whitespace between tokens is ignored):
//
//	pipeline := step { "," step }
//	step     := "seq" "(" pipeline ")" | "fixpoint" "(" pipeline ")"
//	          | NAME [ "{" option { "," option } "}" ]
//	option   := NAME "=" value
//	value    := a double-quoted string | a JSON array or object ([...], {...})
//	          | characters other than , } ( ) { and space
//
// For example
//
//	Normalize,seq(FoldConstant,DeadCodeElimination),VMShapeLower{emit_err_ctx=false}
//	canonicalize,fixpoint(FoldConstant,CanonicalizeBindings,DeadCodeElimination),lower
//
// seq(...) groups steps (Sequential); fixpoint(...) runs its steps in
// rounds until a round changes nothing (Fixpoint). A named pipeline, such
// as optimize (TVM's relax.get_pipeline), is a registered pass of its name
// that runs its sequence: see package barrier.
//
// Printing a parsed pipeline (Steps.String) gives back its text with the
// whitespace removed; option values keep the spelling they were written in.

// Step is one parsed pipeline step: a pass with options, or a group, a
// seq(...) or fixpoint(...).
type Step struct {
	Name     string // the pass name; "seq" or "fixpoint" for a group
	Col      int    // 1-based column of the name in the pipeline text
	Options  []StepOption
	Children Steps // the steps of the group
	// IsSeq marks a group: seq(...), or fixpoint(...) when Name says so.
	IsSeq bool
}

// IsFixpoint reports whether s is a fixpoint(...) group.
func (s *Step) IsFixpoint() bool { return s.IsSeq && s.Name == fixpointName }

// StepOption is one `name=value` as written.
type StepOption struct {
	Name   string
	Value  string // the value's text as written
	Col    int    // column of the name
	ValCol int    // column of the value
}

// Steps is a parsed pipeline.
type Steps []*Step

func (s *Step) String() string {
	if s.IsSeq {
		return s.Name + "(" + s.Children.String() + ")"
	}
	if len(s.Options) == 0 {
		return s.Name
	}
	opts := make([]string, len(s.Options))
	for i, o := range s.Options {
		opts[i] = o.Name + "=" + o.Value
	}
	return s.Name + "{" + strings.Join(opts, ",") + "}"
}

func (ss Steps) String() string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// ParsePipeline parses pipeline text. file names the text in diagnostics
// (e.g. "--passes"); positions are columns on line 1.
func ParsePipeline(file, text string) (Steps, diag.List) {
	p := &pipeParser{file: file, src: text}
	steps := p.pipeline()
	if p.errs == nil {
		p.skipSpace()
		if p.pos < len(p.src) {
			p.errorf(p.pos, "unexpected %q after the pipeline", p.src[p.pos])
		}
	}
	if p.errs != nil {
		return nil, p.errs
	}
	return steps, nil
}

type pipeParser struct {
	file string
	src  string
	pos  int
	errs diag.List
}

func (p *pipeParser) errorf(pos int, format string, args ...any) {
	if p.errs == nil { // report the first error only: later ones cascade
		p.errs.Add(diag.Span{File: p.file, Line: 1, Col: pos + 1}, codePipeSyntax, format, args...)
	}
}

func (p *pipeParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
}

func (p *pipeParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *pipeParser) describe() string {
	if p.pos >= len(p.src) {
		return "end of pipeline"
	}
	return fmt.Sprintf("%q", p.src[p.pos])
}

func (p *pipeParser) ident() (string, int) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && p.pos > start {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos], start
}

// pipeline parses steps until the end or a closing parenthesis; recursion
// follows seq nesting only.
func (p *pipeParser) pipeline() Steps {
	var steps Steps
	for p.errs == nil {
		s := p.step()
		if s == nil {
			return nil
		}
		steps = append(steps, s)
		if p.peek() != ',' {
			return steps
		}
		p.pos++
	}
	return nil
}

func (p *pipeParser) step() *Step {
	name, at := p.ident()
	if name == "" {
		p.errorf(p.pos, "expected a pass name, found %s", p.describe())
		return nil
	}
	s := &Step{Name: name, Col: at + 1}
	switch p.peek() {
	case '(':
		if name != "seq" && name != fixpointName {
			p.errorf(p.pos, "only seq and fixpoint take a parenthesised pipeline; options are written %s{key=value}", name)
			return nil
		}
		p.pos++
		s.IsSeq = true
		s.Children = p.pipeline()
		if p.errs != nil {
			return nil
		}
		if p.peek() != ')' {
			p.errorf(p.pos, "expected ',' or ')' in %s(...), found %s", name, p.describe())
			return nil
		}
		p.pos++
	case '{':
		p.pos++
		for {
			oname, oat := p.ident()
			if oname == "" {
				p.errorf(p.pos, "expected an option name, found %s", p.describe())
				return nil
			}
			if p.peek() != '=' {
				p.errorf(p.pos, "expected '=' after option %s, found %s", oname, p.describe())
				return nil
			}
			p.pos++
			val, vat := p.value()
			if p.errs != nil {
				return nil
			}
			s.Options = append(s.Options, StepOption{Name: oname, Value: val, Col: oat + 1, ValCol: vat + 1})
			c := p.peek()
			p.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				p.pos--
				p.errorf(p.pos, "expected ',' or '}' in options, found %s", p.describe())
				return nil
			}
		}
	}
	return s
}

func (p *pipeParser) value() (string, int) {
	p.skipSpace()
	start := p.pos
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		p.pos++
		for p.pos < len(p.src) && p.src[p.pos] != '"' {
			if p.src[p.pos] == '\\' {
				p.pos++
			}
			p.pos++
		}
		if p.pos >= len(p.src) {
			p.errorf(start, "unterminated string")
			return "", start
		}
		p.pos++
		return p.src[start:p.pos], start
	}
	if p.pos < len(p.src) && (p.src[p.pos] == '[' || p.src[p.pos] == '{') {
		return p.nested(start)
	}
	for p.pos < len(p.src) && !strings.ContainsRune(",}(){ \t\n", rune(p.src[p.pos])) {
		p.pos++
	}
	if p.pos == start {
		p.errorf(p.pos, "expected a value, found %s", p.describe())
	}
	return p.src[start:p.pos], start
}

// nested scans a JSON array or object value: brackets balanced, quoted
// strings (with escapes) skipped whole. Its content is checked when the
// option's type parses it.
func (p *pipeParser) nested(start int) (string, int) {
	var open []byte
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case '"':
			p.pos++
			for p.pos < len(p.src) && p.src[p.pos] != '"' {
				if p.src[p.pos] == '\\' {
					p.pos++
				}
				p.pos++
			}
			if p.pos >= len(p.src) {
				p.errorf(start, "unterminated string")
				return "", start
			}
		case '[', '{':
			open = append(open, c)
		case ']', '}':
			want := byte('[')
			if c == '}' {
				want = '{'
			}
			if open[len(open)-1] != want {
				p.errorf(p.pos, "mismatched %q in option value", c)
				return "", start
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				p.pos++
				return p.src[start:p.pos], start
			}
		}
		p.pos++
	}
	p.errorf(start, "unterminated %q in option value", open[len(open)-1])
	return "", start
}

// Build resolves parsed steps against r into one root Sequential. Unknown
// passes and options (with the closest known name) and ill-typed values
// are reported at their columns. The pipeline remembers r: a PassContext
// without a Registry resolves names and hints against it.
func (r *Registry) Build(file string, steps Steps) (*Pass, diag.List) {
	var errs diag.List
	children := r.buildSteps(file, steps, &errs)
	if errs != nil {
		return nil, errs
	}
	root := Sequential("pipeline", children...)
	root.reg = r
	return root, nil
}

func (r *Registry) buildSteps(file string, steps Steps, errs *diag.List) []*Pass {
	var out []*Pass
	for _, s := range steps {
		at := diag.Span{File: file, Line: 1, Col: s.Col}
		if s.IsSeq {
			children := r.buildSteps(file, s.Children, errs)
			seq := Sequential("seq", children...)
			if s.IsFixpoint() {
				seq = Fixpoint(children...)
			}
			seq.step, seq.file = s, file
			out = append(out, seq)
			continue
		}
		def, ok := r.Lookup(s.Name)
		if !ok {
			errs.Add(at, codeUnknownPass, "%v", unknownName("pass", s.Name, r.Names()))
			continue
		}
		opts := Options{}
		bad := false
		for _, o := range s.Options {
			decl := def.info.option(o.Name)
			if decl == nil {
				errs.Add(diag.Span{File: file, Line: 1, Col: o.Col}, codeBadOption, "pass %s: %v", s.Name, unknownName("option", o.Name, def.info.optionNames()))
				bad = true
				continue
			}
			if _, dup := opts[o.Name]; dup {
				errs.Add(diag.Span{File: file, Line: 1, Col: o.Col}, codeBadOption, "pass %s: option %s given twice", s.Name, o.Name)
				bad = true
				continue
			}
			v, err := decl.Type.ParseValue(o.Value)
			if err != nil {
				errs.Add(diag.Span{File: file, Line: 1, Col: o.ValCol}, codeOptionSyntax, "pass %s: option %s: %v", s.Name, o.Name, err)
				bad = true
				continue
			}
			opts[o.Name] = v
		}
		if bad {
			continue
		}
		p, err := def.With(opts)
		if err != nil {
			errs.Add(at, codeBadOption, "%v", err)
			continue
		}
		p.step, p.file = s, file
		out = append(out, p)
	}
	return out
}

// ParseAndBuild parses pipeline text and builds it against r.
func (r *Registry) ParseAndBuild(file, text string) (*Pass, diag.List) {
	steps, errs := ParsePipeline(file, text)
	if errs != nil {
		return nil, errs
	}
	return r.Build(file, steps)
}
