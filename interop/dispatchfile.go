package interop

// Codec for crucible's dispatch files, <seq>-<template>.md.

import (
	"bytes"
	"fmt"
	"strings"
)

// DispatchFile is a dispatch file: a header, a line "---", then the prompt.
//
//	# Dispatch: <template-name>
//	**Pipeline:** <skill> | **Phase:** <phase> | **Task:** <N>
//	**Timestamp:** <ISO-8601>
//	**Dispatch-Dir:** <dir>
//	---
//	<prompt, verbatim, to the end of the file>
//
// A file without a header (crucible's mocked receipts) has only a Prompt.
type DispatchFile struct {
	Template, Pipeline, Phase, Task, Timestamp, DispatchDir string
	Prompt                                                  []byte // nil when empty
}

// DispatchFileError locates what is wrong in a dispatch file's header. Line is 1-based.
type DispatchFileError struct {
	Line int
	Msg  string
}

func (e *DispatchFileError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

const (
	dfTitle       = "# Dispatch:"
	dfPipeline    = "**Pipeline:**"
	dfPhase       = " | **Phase:**"
	dfTask        = " | **Task:**"
	dfTimestamp   = "**Timestamp:**"
	dfDispatchDir = "**Dispatch-Dir:**"
	dfSeparator   = "---"
)

// ParseDispatchFile reads a dispatch file.
//
// The file has a header when its first line starts with "# Dispatch:" and a
// later line is exactly "---" (or "---\r": CRLF is accepted, and header lines
// lose any '\r' before their newline). The prompt is everything after the
// first such separator, byte for byte. Otherwise the whole file is the prompt
// and the header fields are empty: a receipt or a bare prompt is not an
// error, even one that holds a "---" line.
//
// Header lines, in any order, each at most once, blank lines allowed: the
// title, the "**Pipeline:**" line (whose " | **Phase:**" and " | **Task:**"
// parts may be missing), "**Timestamp:**" and "**Dispatch-Dir:**" (which may
// be missing). A value is the text after its label, less one space; it is not
// otherwise trimmed. Any other line before the separator is an error
// (*DispatchFileError).
func ParseDispatchFile(data []byte) (DispatchFile, error) {
	headerless := DispatchFile{Prompt: dispatchPrompt(data)}
	if !bytes.HasPrefix(data, []byte(dfTitle)) {
		return headerless, nil
	}
	// Find the separator.
	var header []string
	rest := data
	found := false
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		if len(header) > 0 && strings.TrimSuffix(string(line), "\r") == dfSeparator {
			found = true
			break
		}
		header = append(header, strings.TrimRight(string(line), "\r"))
	}
	if !found {
		return headerless, nil
	}

	f := DispatchFile{Template: dispatchValue(header[0][len(dfTitle):]), Prompt: dispatchPrompt(rest)}
	seen := map[string]int{} // label -> line
	for i, s := range header[1:] {
		n := i + 2
		var label string
		switch {
		case strings.TrimSpace(s) == "":
			continue
		case strings.HasPrefix(s, dfPipeline):
			label = dfPipeline
			f.Pipeline, f.Phase, f.Task = parsePipelineLine(s[len(dfPipeline):])
		case strings.HasPrefix(s, dfTimestamp):
			label = dfTimestamp
			f.Timestamp = dispatchValue(s[len(dfTimestamp):])
		case strings.HasPrefix(s, dfDispatchDir):
			label = dfDispatchDir
			f.DispatchDir = dispatchValue(s[len(dfDispatchDir):])
		default:
			return DispatchFile{}, &DispatchFileError{Line: n, Msg: fmt.Sprintf(
				"unexpected header line %q (want %s, %s or %s, then %q)",
				clip(s), dfPipeline, dfTimestamp, dfDispatchDir, dfSeparator)}
		}
		if first, dup := seen[label]; dup {
			return DispatchFile{}, &DispatchFileError{Line: n, Msg: fmt.Sprintf("duplicate %s line (first on line %d)", label, first)}
		}
		seen[label] = n
	}
	return f, nil
}

// parsePipelineLine splits what follows "**Pipeline:**" at the first
// " | **Phase:**", then what follows at the first " | **Task:**". A part
// that starts with "| **Phase:**" or "| **Task:**" (the space before it lost)
// is empty.
func parsePipelineLine(s string) (pipeline, phase, task string) {
	pipeline, after, hasPhase := strings.Cut(dispatchMarkAtStart(s, dfPhase), dfPhase)
	if hasPhase {
		phase, task, _ = strings.Cut(dispatchMarkAtStart(after, dfTask), dfTask)
	} else {
		pipeline, task, _ = strings.Cut(dispatchMarkAtStart(pipeline, dfTask), dfTask)
	}
	return dispatchValue(pipeline), dispatchValue(phase), dispatchValue(task)
}

// dispatchMarkAtStart restores the space of a mark (" | **...") at the start of s.
func dispatchMarkAtStart(s, mark string) string {
	if strings.HasPrefix(s, mark[1:]) {
		return " " + s
	}
	return s
}

// dispatchValue drops the one space that follows a label.
func dispatchValue(s string) string { return strings.TrimPrefix(s, " ") }

func dispatchPrompt(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func (f DispatchFile) headerless() bool {
	return f.Template == "" && f.Pipeline == "" && f.Phase == "" && f.Task == "" &&
		f.Timestamp == "" && f.DispatchDir == ""
}

// Render writes f. A header is written unless every header field is empty and
// the prompt alone reads back as a headerless file, in which case the prompt
// is written as it is (so a receipt is exported byte for byte). The header has
// the title and the Pipeline line (with Phase; Task only when not empty), then
// the Timestamp and Dispatch-Dir lines when not empty, then "---".
// ParseDispatchFile(Render(f)) gives back f when the header values hold no
// line break ('\n' or '\r'), Pipeline holds no "| **Phase:**" and Phase no
// "| **Task:**" (values without " | " qualify, except one that starts with
// those marks).
func (f DispatchFile) Render() []byte {
	if f.headerless() {
		if p, err := ParseDispatchFile(f.Prompt); err == nil && p.headerless() && bytes.Equal(p.Prompt, f.Prompt) {
			return bytes.Clone(f.Prompt)
		}
	}
	var b bytes.Buffer
	b.WriteString(dfTitle + " " + f.Template + "\n")
	b.WriteString(dfPipeline + " " + f.Pipeline + dfPhase + " " + f.Phase)
	if f.Task != "" {
		b.WriteString(dfTask + " " + f.Task)
	}
	b.WriteByte('\n')
	if f.Timestamp != "" {
		b.WriteString(dfTimestamp + " " + f.Timestamp + "\n")
	}
	if f.DispatchDir != "" {
		b.WriteString(dfDispatchDir + " " + f.DispatchDir + "\n")
	}
	b.WriteString(dfSeparator + "\n")
	b.Write(f.Prompt)
	return b.Bytes()
}
