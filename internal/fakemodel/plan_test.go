package fakemodel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func read(p string) ToolCall { return ToolCall{Name: "Read", Input: map[string]any{"file_path": p}} }
func write(p, content string) ToolCall {
	return ToolCall{Name: "Write", Input: map[string]any{"file_path": p, "content": content}}
}
func bash(cmd string) ToolCall  { return ToolCall{Name: "Bash", Input: map[string]any{"command": cmd}} }
func calls(cs ...ToolCall) Turn { return Turn{Calls: cs} }

func TestPlanSection(t *testing.T) {
	w := Where{Workdir: "/w", Report: "/w/.crucible/out.yaml"}
	sec := func(ds ...Directive) *Section { return &Section{Directives: ds} }
	cases := []struct {
		name    string
		client  Client
		sec     *Section
		where   Where
		results []Result
		want    []Turn
		in, out int
		err     string
	}{
		{"claude writes: Read first, as Write wants", Claude, sec(
			Directive{Kind: Write, Arg: "docs/design.md", Block: "# Design\n"},
			Directive{Kind: Report, Block: "status: completed\n"},
		), w, nil, []Turn{
			calls(read("/w/docs/design.md")),
			calls(write("/w/docs/design.md", "# Design\n")),
			calls(write("/w/.crucible/out.yaml", "status: completed\n")),
			{Text: "done"},
		}, 100, 20, ""},
		{"claude appends what Read showed", Claude, sec(Directive{Kind: Append, Arg: "a.txt", Block: "two\n"}), w,
			[]Result{{Text: "     1\tone\n     2\t"}}, []Turn{
				calls(read("/w/a.txt")),
				calls(write("/w/a.txt", "one\ntwo\n")),
				{Text: "done"},
			}, 100, 20, ""},
		{"claude appends to a missing file", Claude, sec(Directive{Kind: Append, Arg: "a.txt", Block: "two\n"}), w,
			[]Result{{Text: "<tool_use_error>File does not exist.</tool_use_error>", IsError: true}}, []Turn{
				calls(read("/w/a.txt")),
				calls(write("/w/a.txt", "two\n")),
				{Text: "done"},
			}, 100, 20, ""},
		{"claude does not read again what it wrote", Claude, sec(
			Directive{Kind: Write, Arg: "a.txt", Block: "one\n"},
			Directive{Kind: Append, Arg: "a.txt", Block: "two\n"},
		), w, nil, []Turn{
			calls(read("/w/a.txt")),
			calls(write("/w/a.txt", "one\n")),
			calls(write("/w/a.txt", "one\ntwo\n")),
			{Text: "done"},
		}, 100, 20, ""},
		{"claude runs, removes, prints, sleeps, counts tokens", Claude, sec(
			Directive{Kind: Tokens, Arg: "1000 300"},
			Directive{Kind: Sleep, Arg: "1.5"},
			Directive{Kind: Run, Arg: "sh test/unit.sh"},
			Directive{Kind: Remove, Arg: "old file.txt"},
			Directive{Kind: Stdout, Block: "first\n"},
			Directive{Kind: Stdout, Block: "second\n"},
			Directive{Kind: Sleep, Arg: "2"},
		), w, nil, []Turn{
			{Calls: []ToolCall{bash("sh test/unit.sh")}, Delay: 1500 * time.Millisecond},
			calls(bash("rm -f 'old file.txt'")),
			{Text: "first\nsecond", Delay: 2 * time.Second},
		}, 1000, 300, ""},
		{"a task run's report is $CRUCIBLE_OUTPUT, written by the shell", Claude, sec(Directive{Kind: Report, Block: "status: completed\n"}),
			Where{Workdir: "/w", Report: "$CRUCIBLE_OUTPUT"}, nil, []Turn{
				calls(bash("cat > \"$CRUCIBLE_OUTPUT\" <<'CRUCIBLE_EOF'\nstatus: completed\nCRUCIBLE_EOF")),
				{Text: "done"},
			}, 100, 20, ""},
		{"exit and crash end the play", Claude, sec(
			Directive{Kind: Stdout, Block: "cannot reach the model\n"},
			Directive{Kind: Exit, Arg: "2"},
			Directive{Kind: Report, Block: "never\n"},
		), w, nil, []Turn{{Text: "cannot reach the model"}}, 100, 20, ""},
		{"api-error answers from where it is", Claude, sec(
			Directive{Kind: Run, Arg: "true"},
			Directive{Kind: Sleep, Arg: "1"},
			Directive{Kind: APIError, Arg: "529"},
			Directive{Kind: Report, Block: "never\n"},
		), w, nil, []Turn{calls(bash("true")), {Error: 529, Delay: time.Second}}, 100, 20, ""},
		{"codex writes, appends and reports with heredocs", Codex, sec(
			Directive{Kind: Write, Arg: "docs/design.md", Block: "# Design\n"},
			Directive{Kind: Append, Arg: "notes.md", Block: "CRUCIBLE_EOF\n"},
			Directive{Kind: Remove, Arg: "x"},
			Directive{Kind: Run, Arg: "sh test/unit.sh"},
			Directive{Kind: Report, Block: "status: completed\n"},
			Directive{Kind: Stdout, Block: "ok\n"},
		), Where{Workdir: "/w", Report: "/r/out's.yaml"}, nil, []Turn{
			calls(execCommand("mkdir -p docs && cat > docs/design.md <<'CRUCIBLE_EOF'\n# Design\nCRUCIBLE_EOF")),
			calls(execCommand("cat >> notes.md <<'CRUCIBLE_EOF_1'\nCRUCIBLE_EOF\nCRUCIBLE_EOF_1")),
			calls(execCommand("rm -f x")),
			calls(execCommand("sh test/unit.sh")),
			calls(execCommand("cat > '/r/out'\\''s.yaml' <<'CRUCIBLE_EOF'\nstatus: completed\nCRUCIBLE_EOF")),
			{Text: "ok"},
		}, 100, 20, ""},
		{"codex reports to $CRUCIBLE_OUTPUT", Codex, sec(Directive{Kind: Report, Block: "a: b\n"}),
			Where{Report: "${CRUCIBLE_OUTPUT}"}, nil, []Turn{
				calls(execCommand("cat > \"$CRUCIBLE_OUTPUT\" <<'CRUCIBLE_EOF'\na: b\nCRUCIBLE_EOF")),
				{Text: "done"},
			}, 100, 20, ""},
		{"no report path", Codex, sec(Directive{Kind: Report, Block: "a: b\n"}), Where{}, nil, nil, 0, 0, "names no report file"},
		{"claude needs the working directory", Claude, sec(Directive{Kind: Write, Arg: "a", Block: "b\n"}), Where{}, nil, nil, 0, 0, "no absolute working directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanSection(c.client, c.sec, c.where, c.results, 100, 20)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalJSON(p.Turns, c.want) || p.In != c.in || p.Out != c.out {
				t.Errorf("got %s %d/%d\nwant %s %d/%d", mustJSON(t, p.Turns), p.In, p.Out, mustJSON(t, c.want), c.in, c.out)
			}
		})
	}
}

func TestPlayNext(t *testing.T) {
	two := calls(bash("a"), bash("b"))
	p := Play{Turns: []Turn{calls(bash("x")), two, {Text: "done"}}}
	for _, c := range []struct{ made, turn int }{{0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {9, 2}} {
		if i, _ := p.Next(c.made); i != c.turn {
			t.Errorf("Next(%d) = turn %d, want %d", c.made, i, c.turn)
		}
	}
}

func TestReadContent(t *testing.T) {
	cases := []struct {
		name string
		r    Result
		want string
	}{
		{"trailing newline", Result{Text: "1\techo unit ok\n2\t"}, "echo unit ok\n"},
		{"padded numbers", Result{Text: "     1\t# Design\n     2\t\n     3\tx\n     4\t"}, "# Design\n\nx\n"},
		{"no trailing newline", Result{Text: "1\tabc"}, "abc"},
		{"a tab in a line", Result{Text: "1\ta\tb\n2\t"}, "a\tb\n"},
		{"a reminder after the lines", Result{Text: "1\tx\n2\t\n\n<system-reminder>\nnothing to see\n</system-reminder>\n"}, "x\n"},
		{"empty file", Result{Text: "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"}, ""},
		{"missing file", Result{Text: "File does not exist.", IsError: true}, ""},
	}
	for _, c := range cases {
		if got := readContent(c.r); got != c.want {
			t.Errorf("%s: readContent = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCodexCommands runs the commands codex is asked to run in sh, and
// wants what the scripted agent makes of the same directives: quoting
// and heredocs keep every byte.
func TestCodexCommands(t *testing.T) {
	awkward := "#!/bin/sh\necho \"$HOME\" '$x' `date` \\\\ \\n\n\tindented\nCRUCIBLE_EOF\n\n"
	sec := &Section{Directives: []Directive{
		{Kind: Write, Arg: "dir with space/it's.sh", Block: awkward},
		{Kind: Append, Arg: "dir with space/it's.sh", Block: "tail\n"},
		{Kind: Write, Arg: "empty", Block: ""},
		{Kind: Write, Arg: "gone", Block: "x\n"},
		{Kind: Remove, Arg: "gone"},
		{Kind: Report, Block: "status: completed\nnotes: \"$CRUCIBLE_OUTPUT\"\n"},
	}}
	work := t.TempDir()
	out := filepath.Join(t.TempDir(), "output.yaml")
	for _, report := range []string{out, "$CRUCIBLE_OUTPUT"} {
		p, err := PlanSection(Codex, sec, Where{Workdir: work, Report: report}, nil, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, turn := range p.Turns {
			for _, c := range turn.Calls {
				cmd := exec.Command("sh", "-c", c.Input["cmd"].(string))
				cmd.Dir, cmd.Env = work, append(os.Environ(), "CRUCIBLE_OUTPUT="+out)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", c.Input["cmd"], err, b)
				}
			}
		}
		want := map[string]string{"dir with space/it's.sh": awkward + "tail\n", "empty": ""}
		if got := tree(t, work); !equalJSON(got, want) {
			t.Errorf("report at %s: work tree %q, want %q", report, got, want)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != sec.Directives[5].Block {
			t.Errorf("report at %s: %q, %v", report, b, err)
		}
		os.RemoveAll(work)
		os.Remove(out)
		os.Mkdir(work, 0o755)
	}
}
