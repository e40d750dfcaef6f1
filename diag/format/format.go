// Package format renders diagnostics for people and for CI: plain text, JSON
// lines, GitHub Actions workflow commands and SARIF 2.1.0 (code scanning).
//
// It knows nothing of the checker: rule metadata for SARIF's rule table is
// passed in as Rule values, so the package sits just above diag.
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
		return writeLines(w, l.Grouped(diag.GroupLimit), GitHubLine)
	case SARIF:
		return writeSARIF(w, l, tool)
	}
	return writeLines(w, l.Grouped(diag.GroupLimit), TextLine)
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

// writeLines writes one line per diagnostic, formatted by line.
func writeLines(w io.Writer, l diag.List, line func(*diag.Diagnostic) string) error {
	for _, d := range l {
		if _, err := fmt.Fprintln(w, line(d)); err != nil {
			return err
		}
	}
	return nil
}

// jsonDiag is one line of the JSON format.
type jsonDiag struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Col      int    `json:"col,omitempty"`
	EndLine  int    `json:"endLine,omitempty"`
	EndCol   int    `json:"endCol,omitempty"`
	Severity string `json:"severity"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	Path     string `json:"path,omitempty"`
}

func writeJSON(w io.Writer, l diag.List) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range l {
		j := jsonDiag{File: d.Span.File, Severity: d.Severity.String(), Code: string(d.Code), Message: d.Msg, Hint: d.Hint, Path: d.Path}
		if d.Span.IsValid() {
			j.Line, j.Col, j.EndLine, j.EndCol = d.Span.Line, d.Span.Col, d.Span.EndLine, d.Span.EndCol
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
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(ghCommand(d.Severity))
	b.WriteString(" file=")
	b.WriteString(ghProperty.Replace(d.Span.File))
	if d.Span.IsValid() {
		b.WriteString(",line=")
		b.WriteString(strconv.Itoa(d.Span.Line))
		b.WriteString(",col=")
		b.WriteString(strconv.Itoa(d.Span.Col))
	}
	title := string(d.Code)
	if title == "" {
		title = "phasec"
	}
	b.WriteString(",title=")
	b.WriteString(ghProperty.Replace(title))
	b.WriteString("::")
	b.WriteString(ghData.Replace(message(d)))
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
		RuleID    string          `json:"ruleId,omitempty"`
		RuleIndex *int            `json:"ruleIndex,omitempty"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
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
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(d.Span.File)}}}
		if d.Span.IsValid() {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: d.Span.Line, StartColumn: d.Span.Col, EndLine: d.Span.EndLine, EndColumn: d.Span.EndCol}
		}
		if d.Path != "" {
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: d.Path}}
		}
		res.Locations = []sarifLocation{loc}
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
