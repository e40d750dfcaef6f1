// Package format renders diagnostics for people and for CI: plain text, JSON
// lines, GitHub Actions workflow commands and SARIF 2.1.0 (code scanning).
//
// It knows nothing of the checker: rule metadata for SARIF's rule table is
// passed in as Rule values, so the package sits just above diag.
//
// A diagnostic's related notes (diag.Related) follow it: in text as
// "file:line:col: note: msg" lines, in JSON lines as its "related" field,
// in SARIF as the result's relatedLocations, and for GitHub as notice
// commands, so the annotation shows at the other position too.
package format

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
)

// Format is an output format.
type Format uint8

const (
	Text Format = iota
	JSON
	GitHub
	SARIF
)

var names = [...]string{Text: "text", JSON: "json", GitHub: "github", SARIF: "sarif"}

func (f Format) String() string { return names[f] }

// Parse returns the format called name.
func Parse(name string) (Format, error) {
	for i, n := range names {
		if n == name {
			return Format(i), nil
		}
	}
	return Text, fmt.Errorf("unknown format %q (want text, json, github or sarif)", name)
}

// Rule describes a diagnostic code for SARIF's rule table.
type Rule struct {
	ID       string // "WF017"
	Title    string // one line
	Hint     string // how to fix it
	Property string // the property or family the rule belongs to
}

// Tool names the program that produced the diagnostics.
type Tool struct {
	Name    string
	Version string
	Rules   []Rule
}

// Write renders l in format f. SARIF is a single document: call Write once
// with every diagnostic of the run. The formats people read (text, GitHub)
// show the first diag.GroupLimit diagnostics of each rule code and count the
// rest; JSON and SARIF carry every one.
func Write(w io.Writer, f Format, l diag.List, tool Tool) error {
	switch f {
	case JSON:
		return writeJSON(w, l)
	case GitHub:
		return writeLines(w, l.Grouped(diag.GroupLimit), GitHubLine, gitHubNote)
	case SARIF:
		return writeSARIF(w, l, tool)
	}
	return writeLines(w, l.Grouped(diag.GroupLimit), TextLine, textNote)
}

// message is the diagnostic's text with its hint: "msg: hint".
func message(d *diag.Diagnostic) string {
	if d.Hint == "" {
		return d.Msg
	}
	return d.Msg + ": " + d.Hint
}

// TextLine formats one diagnostic as "file:line:col: error WF017: message".
func TextLine(d *diag.Diagnostic) string { return d.Head() + ": " + message(d) }

// textNote formats a related note as "file:line:col: note: message".
func textNote(_ *diag.Diagnostic, r diag.Related) string { return r.String() }

// writeLines writes one line per diagnostic, formatted by line, and after
// it one per related note, formatted by note.
func writeLines(w io.Writer, l diag.List, line func(*diag.Diagnostic) string, note func(*diag.Diagnostic, diag.Related) string) error {
	for _, d := range l {
		if _, err := fmt.Fprintln(w, line(d)); err != nil {
			return err
		}
		for _, r := range d.Related {
			if _, err := fmt.Fprintln(w, note(d, r)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonDiag is one line of the JSON format.
type jsonDiag struct {
	File     string        `json:"file"`
	Line     int           `json:"line,omitempty"`
	Col      int           `json:"col,omitempty"`
	EndLine  int           `json:"endLine,omitempty"`
	EndCol   int           `json:"endCol,omitempty"`
	Severity string        `json:"severity"`
	Code     string        `json:"code,omitempty"`
	Message  string        `json:"message"`
	Hint     string        `json:"hint,omitempty"`
	Path     string        `json:"path,omitempty"`
	Related  []jsonRelated `json:"related,omitempty"`
}

// jsonRelated is one related note of a JSON line.
type jsonRelated struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	EndLine int    `json:"endLine,omitempty"`
	EndCol  int    `json:"endCol,omitempty"`
	Message string `json:"message"`
}

func writeJSON(w io.Writer, l diag.List) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range l {
		j := jsonDiag{File: d.Span.File, Severity: d.Severity.String(), Code: string(d.Code), Message: d.Msg, Hint: d.Hint, Path: d.Path}
		if d.Span.IsValid() {
			j.Line, j.Col, j.EndLine, j.EndCol = d.Span.Line, d.Span.Col, d.Span.EndLine, d.Span.EndCol
		}
		for _, r := range d.Related {
			jr := jsonRelated{File: r.Span.File, Message: r.Msg}
			if r.Span.IsValid() {
				jr.Line, jr.Col, jr.EndLine, jr.EndCol = r.Span.Line, r.Span.Col, r.Span.EndLine, r.Span.EndCol
			}
			j.Related = append(j.Related, jr)
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

// GitHub workflow commands escape %, CR and LF in the message, and also ':'
// and ',' in property values.
var (
	ghData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func ghCommand(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "error"
	case diag.Warning:
		return "warning"
	}
	return "notice"
}

// GitHubLine formats one diagnostic as a workflow command:
// "::error file=f.tvms,line=4,col=9,title=WF017::message".
func GitHubLine(d *diag.Diagnostic) string {
	return gitHubCommand(ghCommand(d.Severity), d.Span, gitHubTitle(d), message(d))
}

// gitHubNote formats a related note of d as a notice at the note's own
// position, titled like d, so a pull request shows the other side of a
// conflict too: "::notice file=f.tvms,line=3,col=5,title=phasec::function
// f is first defined here". (A workflow command has one position, so the
// note cannot ride on d's own line.)
func gitHubNote(d *diag.Diagnostic, r diag.Related) string {
	return gitHubCommand("notice", r.Span, gitHubTitle(d), r.Msg)
}

func gitHubTitle(d *diag.Diagnostic) string {
	if d.Code == "" {
		return "phasec"
	}
	return string(d.Code)
}

func gitHubCommand(command string, span diag.Span, title, msg string) string {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(command)
	b.WriteString(" file=")
	b.WriteString(ghProperty.Replace(span.File))
	if span.IsValid() {
		b.WriteString(",line=")
		b.WriteString(strconv.Itoa(span.Line))
		b.WriteString(",col=")
		b.WriteString(strconv.Itoa(span.Col))
	}
	b.WriteString(",title=")
	b.WriteString(ghProperty.Replace(title))
	b.WriteString("::")
	b.WriteString(ghData.Replace(msg))
	return b.String()
}

// SARIF 2.1.0, the subset code scanning reads.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name    string      `json:"name"`
		Version string      `json:"version,omitempty"`
		Rules   []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string            `json:"id"`
		ShortDescription sarifText         `json:"shortDescription"`
		Help             *sarifText        `json:"help,omitempty"`
		Properties       map[string]string `json:"properties,omitempty"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID           string          `json:"ruleId,omitempty"`
		RuleIndex        *int            `json:"ruleIndex,omitempty"`
		Level            string          `json:"level"`
		Message          sarifText       `json:"message"`
		Locations        []sarifLocation `json:"locations"`
		RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	}
	// sarifLocation is a result's location, or (with ID and Message) one
	// of its related locations.
	sarifLocation struct {
		ID               *int           `json:"id,omitempty"`
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
		Message          *sarifText     `json:"message,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
		EndLine     int `json:"endLine,omitempty"`
		EndColumn   int `json:"endColumn,omitempty"`
	}
	sarifLogical struct {
		FullyQualifiedName string `json:"fullyQualifiedName"`
	}
)

func sarifLevel(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "error"
	case diag.Warning:
		return "warning"
	}
	return "note"
}

func sarifPhysicalAt(s diag.Span) sarifPhysical {
	p := sarifPhysical{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(s.File)}}
	if s.IsValid() {
		p.Region = &sarifRegion{StartLine: s.Line, StartColumn: s.Col, EndLine: s.EndLine, EndColumn: s.EndCol}
	}
	return p
}

func writeSARIF(w io.Writer, l diag.List, tool Tool) error {
	driver := sarifDriver{Name: tool.Name, Version: tool.Version, Rules: []sarifRule{}}
	index := map[string]int{}
	for i, r := range tool.Rules {
		index[r.ID] = i
		sr := sarifRule{ID: r.ID, ShortDescription: sarifText{r.Title}}
		if r.Hint != "" {
			sr.Help = &sarifText{r.Hint}
		}
		if r.Property != "" {
			sr.Properties = map[string]string{"property": r.Property}
		}
		driver.Rules = append(driver.Rules, sr)
	}
	results := []sarifResult{}
	for _, d := range l {
		res := sarifResult{RuleID: string(d.Code), Level: sarifLevel(d.Severity), Message: sarifText{message(d)}}
		if i, ok := index[string(d.Code)]; ok {
			res.RuleIndex = &i
		}
		loc := sarifLocation{PhysicalLocation: sarifPhysicalAt(d.Span)}
		if d.Path != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: d.Path}}
		}
		res.Locations = []sarifLocation{loc}
		for i, r := range d.Related {
			res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: &i, PhysicalLocation: sarifPhysicalAt(r.Span), Message: &sarifText{r.Msg}})
		}
		results = append(results, res)
	}
	doc := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}},
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
