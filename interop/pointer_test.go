package interop

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/git-crucible/git-crucible/ledger"
)

func TestParseDispatchPointer(t *testing.T) {
	const path = "/tmp/crucible-dispatch-s1/2-plan-writer.md"
	want := DispatchPointer{Path: path, Seq: 2, Template: "plan-writer"}
	tests := []struct {
		name, prompt string
		want         DispatchPointer // zero: not a pointer
	}{
		{"crucible's words", "Read your full instructions at " + path, want},
		{"full stop", "Read your full instructions at " + path + ".", want},
		{"backticks", "Read and follow the instructions in `" + path + "`.", want},
		{"double quotes", `Your instructions: "` + path + `"`, want},
		{"path first", "Read " + path + ": it holds your full instructions.", want},
		{"parentheses", "Instructions (" + path + ") — read them first.", want},
		{"singular, upper case", "INSTRUCTION FILE: " + path, want},
		{"named twice", "Read your full instructions at " + path + " and re-read " + path + " when unsure.", want},
		{"more lines", "You are the plan writer.\nRead your full instructions at " + path + "\nThen report back.", want},
		{"relative", "Read your full instructions at dispatch/12-build-reviewer.md",
			DispatchPointer{Path: "dispatch/12-build-reviewer.md", Seq: 12, Template: "build-reviewer"}},
		{"bare name", "Your instructions are in 7-cleanup.md", DispatchPointer{Path: "7-cleanup.md", Seq: 7, Template: "cleanup"}},
		{"template with dots", "instructions at /d/3-a.b_c.md", DispatchPointer{Path: "/d/3-a.b_c.md", Seq: 3, Template: "a.b_c"}},

		{"no instructions word", "Review " + path, DispatchPointer{}},
		{"two files", "Read your instructions at " + path + " and /tmp/crucible-dispatch-s1/3-plan-reviewer.md", DispatchPointer{}},
		{"too long", "Read your full instructions at " + path + "\n" + strings.Repeat("x", 1024), DispatchPointer{}},
		{"not a dispatch name", "Read your instructions at /tmp/plan.md", DispatchPointer{}},
		{"no seq", "Read your instructions at /tmp/-plan.md", DispatchPointer{}},
		{"seq zero", "Read your instructions at /tmp/0-plan.md", DispatchPointer{}},
		{"signed seq", "Read your instructions at /tmp/+2-plan.md", DispatchPointer{}},
		{"template starts with a dot", "Read your instructions at /tmp/2-.plan.md", DispatchPointer{}},
		{"not markdown", "Read your instructions at /tmp/2-plan.txt", DispatchPointer{}},
		{"directory", "Read your instructions at /tmp/2-plan.md/", DispatchPointer{}},
		{"empty", "", DispatchPointer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseDispatchPointer(tt.prompt)
			if got != tt.want || ok != (tt.want != DispatchPointer{}) {
				t.Errorf("ParseDispatchPointer(%q) = %+v, %v; want %+v", tt.prompt, got, ok, tt.want)
			}
		})
	}
}

// pointerDir is a dispatch directory holding name with content.
func pointerDir(t *testing.T, name, content string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

func TestReadDispatchPointerRefuses(t *testing.T) {
	dir, target := pointerDir(t, "secret", "not yours\n")
	link := filepath.Join(dir, "2-plan-writer.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "3-plan-writer.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "4-plan-writer.md")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "5-plan-writer.md")
	if err := os.WriteFile(huge, make([]byte, maxDispatchFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		msg     string
		refused bool // wraps ErrNotDispatchFile
	}{
		{link, link + ": is a symbolic link; a pointer is followed only to a regular file", true},
		{fifo, fifo + ": is not a regular file; a pointer is followed only to a regular file", true},
		{sub, sub + ": is not a regular file; a pointer is followed only to a regular file", true},
		{huge, huge + ": is 4194305 bytes, over the 4194304-byte limit", false},
		{filepath.Join(dir, "6-plan-writer.md"), "open " + filepath.Join(dir, "6-plan-writer.md") + ": no such file or directory", false},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			f, err := ReadDispatchPointer(DispatchPointer{Path: tt.path, Seq: 2, Template: "plan-writer"})
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("ReadDispatchPointer = %+v, %v; want error %q", f, err, tt.msg)
			}
			if errors.Is(err, ErrNotDispatchFile) != tt.refused {
				t.Errorf("errors.Is(ErrNotDispatchFile) = %v", !tt.refused)
			}
		})
	}
}

func TestDispatchOf(t *testing.T) {
	_, plan := pointerDir(t, "2-plan-writer.md",
		"# Dispatch: plan-writer\n**Pipeline:** build | **Phase:** 2\n---\nWrite the plan.\n")
	_, impl := pointerDir(t, "9-build-implementer.md",
		"# Dispatch: implementer\n**Pipeline:** build | **Phase:** 3 | **Task:** 4\n---\nImplement task 4.\n")
	_, odd := pointerDir(t, "3-x.md",
		"# Dispatch:  \n**Pipeline:** build | **Phase:** later | **Task:** none\n---\n")
	_, bare := pointerDir(t, "4-receipt.md", "# Receipt\nVERDICT: PASS\n")
	_, bad := pointerDir(t, "5-plan-reviewer.md", "# Dispatch: plan-reviewer\nnot a header line\n---\nx\n")
	task4 := 4
	tests := []struct {
		name string
		call HookEvent
		want AgentDispatch
	}{
		{"plain prompt", HookEvent{Prompt: "echo hello", SubagentType: "general-purpose"},
			AgentDispatch{Role: "general-purpose", Template: "general-purpose", Prompt: []byte("echo hello")}},
		{"subagent type made a name", HookEvent{Prompt: "p", SubagentType: "my agent/v2"},
			AgentDispatch{Role: "my-agent-v2", Template: "my-agent-v2", Prompt: []byte("p")}},
		{"no subagent type: Claude Code's default", HookEvent{Prompt: "p"},
			AgentDispatch{Role: "general-purpose", Template: "general-purpose", Prompt: []byte("p")}},
		{"no subagent type, the agent type that ran", HookEvent{Prompt: "p", AgentType: "Explore"},
			AgentDispatch{Role: "Explore", Template: "Explore", Prompt: []byte("p")}},
		{"the subagent type over the agent type", HookEvent{Prompt: "p", SubagentType: "Plan", AgentType: "general-purpose"},
			AgentDispatch{Role: "Plan", Template: "Plan", Prompt: []byte("p")}},
		{"an empty name made 'agent'", HookEvent{Prompt: "p", SubagentType: "//"},
			AgentDispatch{Role: "agent", Template: "agent", Prompt: []byte("p")}},
		{"pointer", HookEvent{Prompt: "Read your full instructions at " + plan, SubagentType: "general-purpose"},
			AgentDispatch{Role: "plan-writer", Template: "plan-writer", Phase: ledger.Plan, Prompt: []byte("Write the plan.\n")}},
		{"pointer with a task", HookEvent{Prompt: "Read your full instructions at " + impl},
			AgentDispatch{Role: "implementer", Template: "build-implementer", Phase: ledger.Execute, Task: &task4,
				Prompt: []byte("Implement task 4.\n")}},
		{"header values that do not read", HookEvent{Prompt: "instructions: " + odd},
			AgentDispatch{Role: "x", Template: "x", Prompt: []byte("instructions: " + odd)}},
		{"headerless file", HookEvent{Prompt: "instructions: " + bare},
			AgentDispatch{Role: "receipt", Template: "receipt", Prompt: []byte("# Receipt\nVERDICT: PASS\n")}},
		{"bad header", HookEvent{Prompt: "instructions: " + bad},
			AgentDispatch{Role: "plan-reviewer", Template: "plan-reviewer", Prompt: []byte("instructions: " + bad),
				Warning: "dispatch file not read, role and template taken from its name: " + bad +
					`: line 2: unexpected header line "not a header line" (want **Pipeline:**, **Timestamp:** or **Dispatch-Dir:**, then "---")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DispatchOf(tt.call); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DispatchOf:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseDispatchPointer(f *testing.F) {
	f.Add("Read your full instructions at /tmp/crucible-dispatch-s1/2-plan-writer.md")
	f.Add("Read and follow the instructions in `/tmp/crucible-dispatch-s1/3-build-implementer.md`.")
	f.Add("echo hello to stdout")
	f.Fuzz(func(t *testing.T, prompt string) {
		p, ok := ParseDispatchPointer(prompt)
		if !ok {
			if p != (DispatchPointer{}) {
				t.Fatalf("not a pointer, yet %+v", p)
			}
			return
		}
		seq, template, named := DispatchFileName(p.Path[strings.LastIndexByte(p.Path, '/')+1:])
		if !named || seq != p.Seq || template != p.Template || p.Seq < 1 || !strings.Contains(prompt, p.Path) ||
			len(prompt) > maxPointerPrompt {
			t.Fatalf("pointer %+v from %q", p, prompt)
		}
		// Crucible's own wording of the same pointer reads back the same.
		if q, ok := ParseDispatchPointer("Read your full instructions at " + p.Path); !ok || q != p {
			t.Fatalf("pointer %+v re-worded reads as %+v, %v", p, q, ok)
		}
	})
}
