package interop

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	mockReceiptFixture = "build-evals__b1-simple-feature__mock-dispatch__plan-writer.md"

	dispatchTestHeader = "# Dispatch: build-implementer\n" +
		"**Pipeline:** build | **Phase:** 3 | **Task:** 2\n" +
		"**Timestamp:** 2026-04-13T15:20:00Z\n" +
		"**Dispatch-Dir:** /tmp/crucible-dispatch-abc\n" +
		"---\n"
	dispatchTestPrompt = "You are implementing Task 2.\n\n---\n\n## Context\n  indented\r\ntrailing spaces   \n\n"
)

func TestParseDispatchFile(t *testing.T) {
	full := DispatchFile{Template: "build-implementer", Pipeline: "build", Phase: "3", Task: "2",
		Timestamp: "2026-04-13T15:20:00Z", DispatchDir: "/tmp/crucible-dispatch-abc", Prompt: []byte(dispatchTestPrompt)}
	tests := []struct {
		name string
		in   string
		want DispatchFile
	}{
		{"full", dispatchTestHeader + dispatchTestPrompt, full},
		{
			name: "no task part, no timestamp or dispatch-dir lines",
			in:   "# Dispatch: plan-writer\n**Pipeline:** build | **Phase:** 2\n---\nWrite the plan.",
			want: DispatchFile{Template: "plan-writer", Pipeline: "build", Phase: "2", Prompt: []byte("Write the plan.")},
		},
		{
			name: "header lines in another order, blank lines",
			in:   "# Dispatch: t\n\n**Dispatch-Dir:** d\n**Timestamp:** ts\n\n**Pipeline:** p | **Phase:** 1 | **Task:** 7\n---\nx\n",
			want: DispatchFile{Template: "t", Pipeline: "p", Phase: "1", Task: "7", Timestamp: "ts", DispatchDir: "d", Prompt: []byte("x\n")},
		},
		{
			name: "title only",
			in:   "# Dispatch: t\n---\nprompt",
			want: DispatchFile{Template: "t", Prompt: []byte("prompt")},
		},
		{
			name: "empty prompt",
			in:   "# Dispatch: t\n**Pipeline:** p | **Phase:** 1\n---\n",
			want: DispatchFile{Template: "t", Pipeline: "p", Phase: "1"},
		},
		{
			name: "separator at end of file without newline",
			in:   "# Dispatch: t\n---",
			want: DispatchFile{Template: "t"},
		},
		{
			name: "only the first separator counts",
			in:   "# Dispatch: t\n---\n---\nbody\n---\n",
			want: DispatchFile{Template: "t", Prompt: []byte("---\nbody\n---\n")},
		},
		{
			name: "CRLF header",
			in:   "# Dispatch: t\r\n**Pipeline:** p | **Phase:** 2 | **Task:** 1\r\n**Timestamp:** ts\r\n---\r\nline 1\r\nline 2\r\n",
			want: DispatchFile{Template: "t", Pipeline: "p", Phase: "2", Task: "1", Timestamp: "ts", Prompt: []byte("line 1\r\nline 2\r\n")},
		},
		{
			name: "values are not trimmed beyond one space",
			in:   "# Dispatch:  t \n**Pipeline:**  p  | **Phase:** |x| | **Task:** \n---\n",
			want: DispatchFile{Template: " t ", Pipeline: " p ", Phase: "|x|"},
		},
		{
			name: "no space after labels",
			in:   "# Dispatch:t\n**Pipeline:**p | **Phase:**2 | **Task:**3\n**Timestamp:**ts\n---\n",
			want: DispatchFile{Template: "t", Pipeline: "p", Phase: "2", Task: "3", Timestamp: "ts"},
		},
		{
			name: "empty pipeline",
			in:   "# Dispatch: t\n**Pipeline:** | **Phase:** 2\n---\n",
			want: DispatchFile{Template: "t", Phase: "2"},
		},
		{
			name: "task without phase",
			in:   "# Dispatch: t\n**Pipeline:** p | **Task:** 4\n---\n",
			want: DispatchFile{Template: "t", Pipeline: "p", Task: "4"},
		},
		{
			name: "pipeline line alone",
			in:   "# Dispatch: t\n**Pipeline:** build\n---\n",
			want: DispatchFile{Template: "t", Pipeline: "build"},
		},
		{
			name: "no separator: all prompt",
			in:   "# Dispatch: t\n**Pipeline:** p | **Phase:** 1\nno separator\n",
			want: DispatchFile{Prompt: []byte("# Dispatch: t\n**Pipeline:** p | **Phase:** 1\nno separator\n")},
		},
		{
			name: "no title: all prompt, even with a separator",
			in:   "Some receipt\n---\nVERDICT: PASS\n",
			want: DispatchFile{Prompt: []byte("Some receipt\n---\nVERDICT: PASS\n")},
		},
		{
			name: "title not on the first line: all prompt",
			in:   "\n# Dispatch: t\n---\nx",
			want: DispatchFile{Prompt: []byte("\n# Dispatch: t\n---\nx")},
		},
		{
			name: "empty file",
			in:   "",
			want: DispatchFile{},
		},
		{
			name: "separator with trailing space is not one",
			in:   "# Dispatch: t\n--- \n",
			want: DispatchFile{Prompt: []byte("# Dispatch: t\n--- \n")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDispatchFile([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseDispatchFile: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseDispatchFile:\n got %#v\nwant %#v", got, tt.want)
			}
			again, err := ParseDispatchFile(got.Render())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("round trip: %v\n got %#v\nwant %#v", err, again, got)
			}
		})
	}
}

func TestParseDispatchFileMockReceipt(t *testing.T) {
	data := readFixture(t, mockReceiptFixture)
	f, err := ParseDispatchFile(data)
	if err != nil {
		t.Fatalf("ParseDispatchFile: %v", err)
	}
	if want := (DispatchFile{Prompt: data}); !reflect.DeepEqual(f, want) {
		t.Errorf("got %#v, want the whole file as the prompt", f)
	}
	if out := f.Render(); !bytes.Equal(out, data) {
		t.Errorf("Render() is not the file byte for byte:\n%s", out)
	}
	if !bytes.HasPrefix(f.Prompt, []byte("# Receipt — plan-writer (mocked)\n")) {
		t.Errorf("prompt starts %q", f.Prompt[:40])
	}
}

func TestParseDispatchFileErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"prose before the separator", "# Dispatch: t\n**Pipeline:** p | **Phase:** 1\nYou are a reviewer.\n---\n", 3,
			`unexpected header line "You are a reviewer." (want **Pipeline:**, **Timestamp:** or **Dispatch-Dir:**, then "---")`},
		{"second title", "# Dispatch: t\n# Dispatch: u\n---\n", 2,
			`unexpected header line "# Dispatch: u" (want **Pipeline:**, **Timestamp:** or **Dispatch-Dir:**, then "---")`},
		{"unknown bold key", "# Dispatch: t\n**Model:** opus\n---\n", 2,
			`unexpected header line "**Model:** opus" (want **Pipeline:**, **Timestamp:** or **Dispatch-Dir:**, then "---")`},
		{"indented header line", "# Dispatch: t\n  **Timestamp:** ts\n---\n", 2,
			`unexpected header line "  **Timestamp:** ts" (want **Pipeline:**, **Timestamp:** or **Dispatch-Dir:**, then "---")`},
		{"duplicate pipeline", "# Dispatch: t\n**Pipeline:** a\n\n**Pipeline:** b\n---\n", 4, "duplicate **Pipeline:** line (first on line 2)"},
		{"duplicate timestamp", "# Dispatch: t\n**Timestamp:** a\n**Timestamp:** b\n---\n", 3, "duplicate **Timestamp:** line (first on line 2)"},
		{"duplicate dispatch-dir", "# Dispatch: t\n**Dispatch-Dir:** a\r\n**Dispatch-Dir:** a\r\n---\r\n", 3, "duplicate **Dispatch-Dir:** line (first on line 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseDispatchFile([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseDispatchFile succeeded: %#v", f)
			}
			var de *DispatchFileError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v, want *DispatchFileError", err, err)
			}
			if de.Line != tt.line || de.Msg != tt.msg {
				t.Errorf("error = line %d %q\n      want line %d %q", de.Line, de.Msg, tt.line, tt.msg)
			}
			if want := "line " + itoa(tt.line) + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if !reflect.DeepEqual(f, DispatchFile{}) {
				t.Errorf("file on error = %#v, want zero", f)
			}
		})
	}
}

func TestDispatchFileRender(t *testing.T) {
	tests := []struct {
		name string
		f    DispatchFile
		want string
	}{
		{
			name: "full",
			f: DispatchFile{Template: "build-implementer", Pipeline: "build", Phase: "3", Task: "2",
				Timestamp: "2026-04-13T15:20:00Z", DispatchDir: "/tmp/crucible-dispatch-abc", Prompt: []byte(dispatchTestPrompt)},
			want: dispatchTestHeader + dispatchTestPrompt,
		},
		{
			name: "no task, timestamp or dispatch-dir",
			f:    DispatchFile{Template: "plan-writer", Pipeline: "build", Phase: "2", Prompt: []byte("p")},
			want: "# Dispatch: plan-writer\n**Pipeline:** build | **Phase:** 2\n---\np",
		},
		{
			name: "template only",
			f:    DispatchFile{Template: "t"},
			want: "# Dispatch: t\n**Pipeline:**  | **Phase:** \n---\n",
		},
		{
			name: "headerless prompt written as it is",
			f:    DispatchFile{Prompt: []byte("VERDICT: PASS\n---\n")},
			want: "VERDICT: PASS\n---\n",
		},
		{
			name: "headerless prompt that looks like a header gets an empty header",
			f:    DispatchFile{Prompt: []byte("# Dispatch: x\n---\nbody")},
			want: "# Dispatch: \n**Pipeline:**  | **Phase:** \n---\n# Dispatch: x\n---\nbody",
		},
		{
			name: "headerless prompt with a bad header gets an empty header",
			f:    DispatchFile{Prompt: []byte("# Dispatch: x\nprose\n---\n")},
			want: "# Dispatch: \n**Pipeline:**  | **Phase:** \n---\n# Dispatch: x\nprose\n---\n",
		},
		{
			name: "nothing",
			f:    DispatchFile{},
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.f.Render()
			if string(out) != tt.want {
				t.Errorf("Render()\n got %q\nwant %q", out, tt.want)
			}
			got, err := ParseDispatchFile(out)
			if err != nil || !reflect.DeepEqual(got, tt.f) {
				t.Errorf("ParseDispatchFile(Render()) = %#v, %v\nwant %#v", got, err, tt.f)
			}
		})
	}
}

func TestDispatchFileRoundTripValues(t *testing.T) {
	odd := []string{"", " ", " lead", "trail ", "a|b", "a |", "| b", "**Phase:**", "---", "# Dispatch: x", "é\u2028", "|", "||"}
	for _, v := range odd {
		f := DispatchFile{Template: v, Pipeline: v, Phase: v, Task: v, Timestamp: v, DispatchDir: v, Prompt: []byte(v)}
		if v == "" {
			f.Prompt = nil
		}
		got, err := ParseDispatchFile(f.Render())
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("value %q: ParseDispatchFile(Render()) = %#v, %v\nrendered %q", v, got, err, f.Render())
		}
	}
}

func FuzzParseDispatchFile(f *testing.F) {
	f.Add([]byte(dispatchTestHeader + dispatchTestPrompt))
	f.Add(readFixture(f, mockReceiptFixture))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDispatchFile(data)
		if err != nil {
			var de *DispatchFileError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v, want *DispatchFileError", err, err)
			}
			if de.Line < 2 || de.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("line out of range in %v", err)
			}
			if !reflect.DeepEqual(d, DispatchFile{}) {
				t.Fatalf("non-zero file with error %v", err)
			}
			return
		}
		if !bytes.HasSuffix(data, d.Prompt) {
			t.Fatalf("prompt %q is not the end of the file", d.Prompt)
		}
		if d.Prompt != nil && len(d.Prompt) == 0 {
			t.Fatalf("empty non-nil prompt")
		}
		for _, v := range []string{d.Template, d.Pipeline, d.Phase, d.Task, d.Timestamp, d.DispatchDir} {
			if strings.Contains(v, "\n") || strings.HasSuffix(v, "\r") {
				t.Fatalf("header value %q holds a line break", v)
			}
		}
		out := d.Render()
		if d.headerless() && bytes.Equal(d.Prompt, data) && !bytes.Equal(out, data) {
			t.Fatalf("headerless file not rendered byte for byte:\n%q\n%q", data, out)
		}
		d2, err := ParseDispatchFile(out)
		if err != nil {
			t.Fatalf("ParseDispatchFile(Render()): %v\ninput %q\nrendered %q", err, data, out)
		}
		if !reflect.DeepEqual(d, d2) {
			t.Fatalf("round trip differs:\n got %#v\nwant %#v\ninput %q\nrendered %q", d2, d, data, out)
		}
		if again := d2.Render(); !bytes.Equal(again, out) {
			t.Fatalf("render not stable:\n%q\n%q", out, again)
		}
	})
}
