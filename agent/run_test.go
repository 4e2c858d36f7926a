package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/pipeline"
)

// fakeCLIs puts the stand-ins for claude and codex first on PATH.
func fakeCLIs(t *testing.T) {
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func request(t *testing.T) Request {
	dir := t.TempDir()
	return Request{Prompt: []byte("Write the design.\n"), PromptFile: filepath.Join(dir, "dispatch", "prompt.md"),
		Output: filepath.Join(dir, "out", "output.yaml"), Workdir: t.TempDir(), Pipeline: "build-1", Seq: 7, Role: "reviewer",
		Template: "reviewer", Phase: 2, Round: 3}
}

func failure(t *testing.T, err error, kind FailureKind) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) || f.Kind != kind {
		t.Fatalf("err = %v (%T), want a %s failure", err, err, kind)
	}
	return f
}

// TestProtocol: the agent gets the prompt on stdin and in its file, runs in
// the work dir with the protocol's variables and its configured ones, and
// not the GIT_DIR we run with; its report is read.
func TestProtocol(t *testing.T) {
	t.Setenv("GIT_DIR", "/somewhere/else")
	t.Setenv("CRUCIBLE_TASK", "stale")
	script, _ := filepath.Abs("testdata/bin/protocol")
	req := request(t)
	res, err := Run(t.Context(), Agent{Name: "p", Kind: Command, Command: []string{script}, Env: map[string]string{"AGENT_MODE": "strict"}}, req)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"AGENT_MODE=strict", "CRUCIBLE_OUTPUT=" + req.Output, "CRUCIBLE_PHASE=2",
		"CRUCIBLE_PIPELINE=build-1", "CRUCIBLE_PROMPT=" + req.PromptFile, "CRUCIBLE_ROLE=reviewer", "CRUCIBLE_ROUND=3",
		"CRUCIBLE_SEQ=7", "CRUCIBLE_TASK=", "CRUCIBLE_TEMPLATE=reviewer", "CRUCIBLE_WORKDIR=" + req.Workdir}, "\n") + "\n"
	if string(res.Report) != want {
		t.Errorf("report:\n%s\nwant:\n%s", res.Report, want)
	}
	if got := string(res.Output); got != "Write the design.\n"+req.Workdir+"\n" || string(res.Stdout.Bytes()) != got {
		t.Errorf("output %q", got)
	}
	if prompt, _ := os.ReadFile(req.PromptFile); string(prompt) != "Write the design.\n" {
		t.Errorf("prompt file %q", prompt)
	}
	if res.ExitCode != 0 || res.Duration <= 0 || !slices.Equal(res.Argv, []string{script}) {
		t.Errorf("result %+v", res)
	}
}

// TestClaude: the result field is the output, in both shapes claude
// prints; its usage, model and refusals are read; is_error, an API error
// and anything not JSON are failures, and a failed exit says what claude
// said on stderr; the role's access and the configured model are passed.
func TestClaude(t *testing.T) {
	fakeCLIs(t)
	claude := Agent{Name: "c", Kind: Claude, Model: "opus", Args: []string{"--verbose"}}
	cost := func(f float64) *float64 { return &f }
	for _, c := range []struct {
		mode, output, report string
		fail                 FailureKind
		detail               string
		usage                string
		denials              []string
	}{
		{"", "seq 7 reviewer, 18 prompt bytes, args: -p --output-format json --permission-mode dontAsk --allowedTools Edit(./.crucible/runs/**) --verbose --model opus",
			"", "", "", usageText(&pipeline.Usage{Client: "claude", SessionID: "9f15d03c-a661-4cc8-86ec-a97eec3ef2ad", Model: "claude-opus-4-8[1m]", Turns: 1,
				InputTokens: 100, OutputTokens: 20, CostUSD: cost(0.001), DurationMS: 198}), nil},
		{"verbose-array", "hi from the fake model", "", "", "", usageText(&pipeline.Usage{Client: "claude", SessionID: "d2a0b0c6-8370-4793-aae6-0c1ae8142c3b",
			Model: "claude-opus-4-8[1m]", Turns: 1, InputTokens: 100, OutputTokens: 20, CostUSD: cost(0.001), DurationMS: 206}), nil},
		{"report", "Wrote /home/dev/src/plain/out.txt (tool result: File created successfully at: /home/dev/src/plain/out.txt (file state is current in your context — no need to Read it back))",
			"status: completed\n", "", "", "", nil},
		{"denied", "", "", "", "", "", []string{"Write /home/dev/src/plain/.git/crucible/runs/x/1/output.yaml"}},
		{"api-error-400", "API Error: 400 fake: forced failure 400", "", APIError, "claude's model API answered 400: API Error: 400 fake: forced failure 400", "", nil},
		{"root", "", "", ExitStatus, "", "", nil},
		{"garbage", "", "", BadOutput, "claude printed something else, not the JSON result of --output-format json", "", nil},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Setenv("FAKE_CLAUDE", c.mode)
			res, err := Run(t.Context(), claude, request(t))
			if c.fail != "" {
				f := failure(t, err, c.fail)
				if c.detail != "" && f.Error() != c.detail {
					t.Errorf("failure %q, want %q", f.Error(), c.detail)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if c.output != "" && string(res.Output) != c.output || string(res.Report) != c.report {
				t.Errorf("output %q report %q", res.Output, res.Report)
			}
			if c.usage != "" && usageText(res.Usage) != c.usage {
				t.Errorf("usage %v\nwant  %v", usageText(res.Usage), c.usage)
			}
			if !slices.Equal(res.Denials, c.denials) {
				t.Errorf("denials %q, want %q", res.Denials, c.denials)
			}
		})
	}
	t.Run("root", func(t *testing.T) {
		t.Setenv("FAKE_CLAUDE", "root")
		_, err := Run(t.Context(), claude, request(t))
		if want := "the agent exited with status 1: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"; err == nil || err.Error() != want {
			t.Errorf("err %v, want %s", err, want)
		}
	})
}

// usageText is u as the chain keeps it.
func usageText(u *pipeline.Usage) string {
	b, _ := json.Marshal(u)
	return string(b)
}

// TestRefusedText: what claude refused, said in a sentence.
func TestRefusedText(t *testing.T) {
	if got := RefusedText(Claude, []string{"Write /r/.git/x", "Bash sh x.sh", "WebFetch"}); got != "claude was refused Write on /r/.git/x; Bash on sh x.sh; WebFetch" {
		t.Error(got)
	}
	if got := RefusedText(Claude, nil); got != "" {
		t.Error(got)
	}
}

// TestCodex: the prompt goes on stdin ("-"), the output is the last
// message codex wrote; its JSON events give its usage.
func TestCodex(t *testing.T) {
	fakeCLIs(t)
	res, err := Run(t.Context(), Agent{Name: "x", Kind: Codex, Model: "gpt-5", Args: []string{"-c", "x=1"}}, request(t))
	if err != nil {
		t.Fatal(err, string(res.Stderr.Bytes()))
	}
	if want := "last message of reviewer: --sandbox workspace-write -c x=1 --model gpt-5\n"; string(res.Output) != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	if want := usageText(&pipeline.Usage{Client: "codex", SessionID: "01a21f42-dbc2-7370-8798-66ff6b311c7b", Turns: 1, InputTokens: 200, OutputTokens: 40, CacheReadTokens: 50}); usageText(res.Usage) != want {
		t.Errorf("usage %v, want %v", usageText(res.Usage), want)
	}
	if string(res.Stderr.Bytes()) != "codex: working on 18 prompt bytes\n" || res.Argv[1] != "exec" || res.Argv[len(res.Argv)-1] != "-" {
		t.Errorf("stderr %q argv %q", res.Stderr.Bytes(), res.Argv)
	}
}

// TestReadCodexFailure: a failed turn fails the dispatch; a stream error
// that a later turn got past does not.
func TestReadCodexFailure(t *testing.T) {
	for _, c := range []struct {
		out, fail string
	}{
		{`{"type":"turn.started"}` + "\n" + `{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided"}}`,
			"codex's model API answered 401: unexpected status 401 Unauthorized: Incorrect API key provided"},
		{`{"type":"turn.failed","error":{"message":"the sandbox could not start"}}`, "codex reported an error: the sandbox could not start"},
		{`{"type":"error","message":"Reconnecting... 1/5"}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":1}}`, ""},
		{`{"type":"error","message":"stream disconnected"}`, "codex reported an error: stream disconnected"},
		{"not json at all\n", ""},
	} {
		_, f := readCodex(Captured{Head: []byte(c.out)})
		if got := ""; f != nil {
			got = f.Error()
			if got != c.fail {
				t.Errorf("%q: %q, want %q", c.out, got, c.fail)
			}
		} else if c.fail != "" {
			t.Errorf("%q: no failure, want %q", c.out, c.fail)
		}
	}
}

// childGone reports whether the process the spawner started has ended
// (a zombie no one reaps counts as ended).
func childGone(t *testing.T, workdir string) bool {
	b, err := os.ReadFile(filepath.Join(workdir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for range 200 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TestTimeoutKillsGroup: at its timeout the agent and the child it
// started are killed, a child that ignores SIGTERM after the grace period.
func TestTimeoutKillsGroup(t *testing.T) {
	script, _ := filepath.Abs("testdata/bin/spawner")
	for _, mode := range []string{"plain", "stubborn"} {
		t.Run(mode, func(t *testing.T) {
			req := request(t)
			r := Runner{Grace: 300 * time.Millisecond}
			res, err := r.Run(t.Context(), Agent{Kind: Command, Command: []string{script, mode}, Timeout: 300 * time.Millisecond}, req)
			f := failure(t, err, TimedOut)
			if f.Error() != "the agent did not finish within its timeout of 300ms: its process group was killed" {
				t.Errorf("%q", f.Error())
			}
			if string(res.Stdout.Bytes()) != "started\n" || res.ExitCode != -1 || res.Duration > 5*time.Second {
				t.Errorf("stdout %q exit %d after %s", res.Stdout.Bytes(), res.ExitCode, res.Duration)
			}
			if !childGone(t, req.Workdir) {
				t.Error("the agent's child survived")
			}
		})
	}
}

// TestCancel: cancelling the context kills the group too.
func TestCancel(t *testing.T) {
	script, _ := filepath.Abs("testdata/bin/spawner")
	req := request(t)
	ctx, cancel := contextWithCancelAfter(t.Context(), 200*time.Millisecond)
	defer cancel()
	r := Runner{Grace: 200 * time.Millisecond}
	_, err := r.Run(ctx, Agent{Kind: Command, Command: []string{script}}, req)
	failure(t, err, Cancelled)
	if !childGone(t, req.Workdir) {
		t.Error("the agent's child survived")
	}
}

// TestLeftBehind: a child left running when the agent exits is ended with
// it, and does not hold the dispatch up.
func TestLeftBehind(t *testing.T) {
	req := request(t)
	r := Runner{Grace: 200 * time.Millisecond}
	res, err := r.Run(t.Context(), Agent{Kind: Command, Command: []string{"sh", "-c", `sleep 300 & echo $! >child.pid; echo done`}}, req)
	if err != nil || string(res.Output) != "done\n" {
		t.Fatalf("%v %q", err, res.Output)
	}
	if !childGone(t, req.Workdir) {
		t.Error("the agent's child survived")
	}
}

// TestHugeStdout: only the head and tail are kept, with the count of
// what was cut, from a pipe as from a file, which keeps it all.
func TestHugeStdout(t *testing.T) {
	var all strings.Builder
	for i := 1; i <= 1000000; i++ {
		fmt.Fprintf(&all, "%d\n", i)
	}
	s := all.String()
	for _, toFile := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", toFile), func(t *testing.T) {
			r := Runner{MaxCapture: 1000}
			req := request(t)
			if toFile {
				req.StdoutFile = filepath.Join(t.TempDir(), "stdout")
			}
			res, err := r.Run(t.Context(), Agent{Kind: Command, Command: []string{"seq", "1000000"}}, req)
			if err != nil {
				t.Fatal(err)
			}
			out := res.Stdout
			if string(out.Head) != s[:500] || string(out.Tail) != s[len(s)-500:] || out.Cut != int64(len(s)-1000) {
				t.Errorf("head %q... tail ...%q cut %d", out.Head[:20], out.Tail[480:], out.Cut)
			}
			if want := s[:500] + fmt.Sprintf("\n[git-crucible: %d bytes cut here]\n", len(s)-1000) + s[len(s)-500:]; string(out.Bytes()) != want {
				t.Error("Bytes does not say what was cut")
			}
			if kept, _ := os.ReadFile(req.StdoutFile); toFile && string(kept) != s {
				t.Errorf("the stdout file holds %d bytes, want %d", len(kept), len(s))
			}
		})
	}
}

// TestCaptureWrites: the head and tail are right whatever the sizes of
// the writes.
func TestCaptureWrites(t *testing.T) {
	data := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	for _, step := range []int{1, 3, 7, 10, 36} {
		for _, limit := range []int{4, 10, 40, 100} {
			c := newCapture(limit)
			for i := 0; i < len(data); i += step {
				c.Write(data[i:min(i+step, len(data))])
			}
			got := c.result()
			half := limit / 2
			wantHead := data[:min(half, len(data))]
			wantTail := data[len(wantHead):]
			if len(wantTail) > half {
				wantTail = wantTail[len(wantTail)-half:]
			}
			if string(got.Head) != string(wantHead) || string(got.Tail) != string(wantTail) || got.Cut != int64(len(data)-len(wantHead)-len(wantTail)) {
				t.Errorf("step %d limit %d: %q %q %d", step, limit, got.Head, got.Tail, got.Cut)
			}
		}
	}
}

// TestReadCaptured: a stream read back from a file keeps what a capture
// of the same limit keeps of it, whatever their sizes.
func TestReadCaptured(t *testing.T) {
	data := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	for _, size := range []int{0, 1, 5, 20, 36} {
		for _, limit := range []int{1, 4, 10, 40, 100} {
			path := filepath.Join(t.TempDir(), "stdout")
			if err := os.WriteFile(path, data[:size], 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCapture(limit)
			c.Write(data[:size])
			got, err := readCaptured(path, limit)
			if want := c.result(); err != nil || string(got.Head) != string(want.Head) || string(got.Tail) != string(want.Tail) || got.Cut != want.Cut {
				t.Errorf("size %d limit %d: %+v, %v; want %+v", size, limit, got, err, want)
			}
		}
	}
}

// TestBadReports: a symbolic link, a FIFO and an oversized file at
// CRUCIBLE_OUTPUT are refused, not read.
func TestBadReports(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("do not keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		argv func(out string) []string
		why  string
	}{
		{"symlink", func(out string) []string { return []string{"ln", "-s", secret, out} }, "is a symbolic link; not read"},
		{"fifo", func(out string) []string { return []string{"mkfifo", out} }, "is not a regular file; not read"},
		{"large", func(out string) []string { return []string{"sh", "-c", `seq 100 >"$CRUCIBLE_OUTPUT"`} }, "is 292 bytes, over the 100-byte limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := request(t)
			r := Runner{MaxReport: 100}
			res, err := r.Run(t.Context(), Agent{Kind: Command, Command: c.argv(req.Output)}, req)
			f := failure(t, err, BadReport)
			if f.Error() != "the agent's report "+req.Output+": "+c.why || res.Report != nil {
				t.Errorf("%q, report %q", f.Error(), res.Report)
			}
		})
	}
}

// TestExits: the failures an engine records, each with what it needs.
func TestExits(t *testing.T) {
	for _, c := range []struct {
		argv []string
		kind FailureKind
		msg  string
		exit int
	}{
		{[]string{"sh", "-c", "echo partial; exit 3"}, ExitStatus, "the agent exited with status 3", 3},
		{[]string{"sh", "-c", "kill -SEGV $$"}, Signalled, "the agent was killed by signal SIGSEGV", -1},
		{[]string{"/nonexistent/agent"}, NotStarted, "could not start /nonexistent/agent: fork/exec /nonexistent/agent: no such file or directory", -1},
	} {
		res, err := Run(t.Context(), Agent{Kind: Command, Command: c.argv}, request(t))
		if f := failure(t, err, c.kind); f.Error() != c.msg || res.ExitCode != c.exit {
			t.Errorf("%q: %q exit %d", c.argv, f.Error(), res.ExitCode)
		}
	}
}

// TestManual: nothing runs; the prompt is written and the person is told
// the command that finishes the dispatch.
func TestManual(t *testing.T) {
	req := request(t)
	_, err := Run(t.Context(), Agent{Name: "manual", Kind: Manual}, req)
	var w *Waiting
	if !errors.As(err, &w) {
		t.Fatalf("err = %v", err)
	}
	want := []string{"git", "crucible", "dispatch", "finish", "7", "--status", "completed", "--output", req.Output, "--pipeline", "build-1"}
	if !slices.Equal(w.Finish, want) || w.PromptFile != req.PromptFile {
		t.Errorf("%+v", w)
	}
	if b, _ := os.ReadFile(req.PromptFile); string(b) != string(req.Prompt) {
		t.Errorf("prompt file %q", b)
	}
}

// TestStaleOutput: a file already at CRUCIBLE_OUTPUT would pass for the
// agent's report, so the dispatch does not start.
func TestStaleOutput(t *testing.T) {
	req := request(t)
	if err := os.MkdirAll(filepath.Dir(req.Output), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(req.Output, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), Agent{Kind: Command, Command: []string{"true"}}, req)
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("err = %v", err)
	}
}

func contextWithCancelAfter(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(d, cancel)
	return ctx, cancel
}

// TestStartedTellsThePid: Started is told the agent's own pid while it
// runs, the leader of its own process group.
func TestStartedTellsThePid(t *testing.T) {
	req := request(t)
	var pid, pgid int
	r := Runner{Started: func(p int) {
		pid = p
		pgid, _ = syscall.Getpgid(p)
	}}
	res, err := r.Run(t.Context(), Agent{Name: "s", Kind: Command, Command: []string{"sh", "-c", "echo $$"}}, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Output)); got != strconv.Itoa(pid) || pgid != pid {
		t.Fatalf("Started got pid %d (group %d); the agent says its pid is %s", pid, pgid, got)
	}
}

// TestAdopt: what an agent left in its files gives the answer Run derived
// from them, and whether it shows the agent finished; an agent's output
// file that is not a regular file is refused.
func TestAdopt(t *testing.T) {
	fakeCLIs(t)
	claude, codex := Agent{Name: "c", Kind: Claude}, Agent{Name: "x", Kind: Codex}
	for _, c := range []struct {
		name     string
		agent    Agent
		mode     string // FAKE_CLAUDE
		answered bool
		fail     FailureKind
	}{
		{"claude", claude, "", true, ""},
		{"claude array", claude, "array", true, ""},
		{"claude report", claude, "report", true, ""},
		{"claude api error", claude, "api-error-400", true, APIError},
		{"claude garbage", claude, "garbage", false, BadOutput},
		{"codex", codex, "", true, ""},
		{"command", Agent{Kind: Command, Command: []string{"echo", "partial"}}, "", false, ""},
		{"command report", Agent{Kind: Command, Command: []string{"sh", "-c", `echo done; echo report >"$CRUCIBLE_OUTPUT"`}}, "", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_CLAUDE", c.mode)
			req := request(t)
			dir := filepath.Dir(req.Output)
			req.StdoutFile, req.StderrFile, req.LastMessageFile = filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), filepath.Join(dir, "last")
			var r Runner
			live, liveErr := r.Run(t.Context(), c.agent, req)
			res, answered, err := r.Adopt(c.agent, req)
			if c.fail != "" {
				failure(t, liveErr, c.fail)
				failure(t, err, c.fail)
			} else if liveErr != nil || err != nil {
				t.Fatal(liveErr, err)
			}
			if answered != c.answered || res.ExitCode != -1 {
				t.Errorf("answered %v exit %d", answered, res.ExitCode)
			}
			if len(live.Stdout.Bytes()) == 0 || string(res.Stdout.Bytes()) != string(live.Stdout.Bytes()) ||
				string(res.Stderr.Bytes()) != string(live.Stderr.Bytes()) || string(res.Output) != string(live.Output) ||
				string(res.Report) != string(live.Report) || usageText(res.Usage) != usageText(live.Usage) {
				t.Errorf("adopted %+v\nran %+v", res, live)
			}
		})
	}
	t.Run("codex without its last message", func(t *testing.T) {
		req := request(t)
		req.StdoutFile, req.LastMessageFile = filepath.Join(t.TempDir(), "stdout"), filepath.Join(t.TempDir(), "last")
		if err := os.WriteFile(req.StdoutFile, []byte("half a mess"), 0o644); err != nil {
			t.Fatal(err)
		}
		var r Runner
		if res, answered, err := r.Adopt(codex, req); answered || err != nil || res.Output != nil {
			t.Errorf("adopted %+v answered %v err %v", res, answered, err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		req := request(t)
		req.StdoutFile = filepath.Join(t.TempDir(), "stdout")
		if err := os.Symlink("/etc/passwd", req.StdoutFile); err != nil {
			t.Fatal(err)
		}
		var r Runner
		res, answered, err := r.Adopt(claude, req)
		if f := failure(t, err, BadOutput); answered || len(res.Stdout.Bytes()) != 0 || f.Detail != "the agent's output "+req.StdoutFile+" is a symbolic link; not read" {
			t.Errorf("adopted %+v answered %v: %v", res, answered, err)
		}
	})
}

// TestHint: the causes a person can act on get their sentence.
func TestHint(t *testing.T) {
	for _, c := range []struct {
		kind    FailureKind
		summary string
		want    string // a word of the hint; "" for none
	}{
		{ExitStatus, "the agent exited with status 1: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", "IS_SANDBOX=1"},
		{APIError, "claude's model API answered 401: API Error: 401 invalid x-api-key", "ANTHROPIC_API_KEY"},
		{APIError, "claude's model API answered 529: API Error: Overloaded", "--resume"},
		{NoReport, "it wrote no report (claude was refused Write on /r/x): its output is kept", "git crucible agents"},
		{NotStarted, "could not start claude: no such file", "git crucible agents"},
		{BadReport, "report: line 1: not YAML", ""},
	} {
		got := Hint(c.kind, c.summary)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s %q: hint %q, want one with %q", c.kind, c.summary, got, c.want)
		}
	}
}
