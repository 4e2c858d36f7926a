package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/pipeline"
)

// started records dispatch.start of implement as a killed engine left it,
// and returns its run directory, made.
func started(t *testing.T, e *Engine) (int, string) {
	t.Helper()
	seq, err := e.Service.StartDispatch(t.Context(), e.ID, pipeline.DispatchRequest{Role: implement.Role, Phase: implement.Point.Phase,
		Template: implement.Template, Prompt: implement.Prompt, Step: implement.Point.Step, TaskID: implement.Point.Task})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.RunDir(seq)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return seq, dir
}

// orphan starts script as an agent of dispatch seq that outlived its
// engine: its own process group, the protocol's variables.
func orphan(t *testing.T, e *Engine, seq int, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "CRUCIBLE_PIPELINE="+e.ID, "CRUCIBLE_SEQ="+strconv.Itoa(seq),
		"CRUCIBLE_OUTPUT="+filepath.Join(e.RunDir(seq), reportFile), "CRUCIBLE_WORKDIR="+e.Workdir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // as init would reap it
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const completedReport = "status: completed\ndeviations: []\n"

// gone is the owner record of an agent of kind that has ended.
func gone(kind string) string {
	return `{"pid":2147483647,"start":"1","boot":"another boot","kind":"` + kind + `"}`
}

// TestRecover: each way a killed engine can leave a dispatch is settled
// without running it again, as what was left allows.
func TestRecover(t *testing.T) {
	slowReport := `sleep 0.4; printf 'status: completed\ndeviations: []\n' >"$CRUCIBLE_OUTPUT"`
	for _, c := range []struct {
		name   string
		leave  func(t *testing.T, e *Engine, seq int, dir string)
		want   Outcome // Seq, Report and Waiting not compared
		output string
	}{
		{"nothing left", func(*testing.T, *Engine, int, string) {},
			Outcome{Status: "error", Summary: InterruptedSummary, Recovered: Interrupted}, ""},
		{"report left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, reportFile), completedReport)
		},
			Outcome{Status: "completed", Summary: "report of 33 bytes", Recovered: Adopted}, completedReport},
		{"exit record left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, outputFile), "it broke\n")
			write(t, filepath.Join(dir, exitFile), `{"status":"failed","summary":"the agent exited with status 2","failure":"exit"}`)
		}, Outcome{Status: "failed", Summary: "the agent exited with status 2", Failure: "exit", Recovered: Adopted}, "it broke\n"},
		{"agent running", func(t *testing.T, e *Engine, seq int, dir string) {
			cmd := orphan(t, e, seq, slowReport)
			o := newOwner(cmd.Process.Pid)
			o.Deadline = time.Now().Add(time.Minute)
			if err := writeJSON(filepath.Join(dir, ownerFile), o); err != nil {
				t.Fatal(err)
			}
		}, Outcome{Status: "completed", Summary: "report of 33 bytes", Recovered: Waited}, completedReport},
		{"agent running, its owner not recorded", func(t *testing.T, e *Engine, seq int, _ string) { orphan(t, e, seq, slowReport) },
			Outcome{Status: "completed", Summary: "report of 33 bytes", Recovered: Waited}, completedReport},
		{"agent past its deadline", func(t *testing.T, e *Engine, seq int, dir string) {
			cmd := orphan(t, e, seq, "sleep 30")
			o := newOwner(cmd.Process.Pid)
			o.Deadline = time.Now().Add(200 * time.Millisecond)
			if err := writeJSON(filepath.Join(dir, ownerFile), o); err != nil {
				t.Fatal(err)
			}
		}, Outcome{Status: "failed", Failure: "timeout", Recovered: Waited,
			Summary: "the agent did not finish within its timeout after the engine stopped: its process group was killed"}, ""},
		{"a garbage report left where a task report is required", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, formatFile), "task")
			write(t, filepath.Join(dir, reportFile), "status: [completed\n")
		}, Outcome{Status: "failed", Failure: "bad-report", Recovered: Adopted,
			Summary: "report: line 1: did not find expected ',' or ']'"}, "status: [completed\n"},
		{"findings required, codex's last message left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, formatFile), "findings")
			write(t, filepath.Join(dir, ownerFile), gone("codex"))
			write(t, filepath.Join(dir, lastMessageFile), "looks fine\n")
		}, Outcome{Status: "failed", Failure: "no-report", Recovered: Adopted, Summary: NoReportSummary}, "looks fine\n"},
		{"report refused", func(t *testing.T, _ *Engine, _ int, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, reportFile)); err != nil {
				t.Fatal(err)
			}
		}, Outcome{Status: "failed", Failure: "bad-report", Recovered: Adopted, Summary: "the agent's report " + filepath.Join("RUNDIR", reportFile) +
			": is a symbolic link; not read"}, ""},
		{"claude's answer left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, ownerFile), gone("claude"))
			write(t, filepath.Join(dir, stdoutFile), `{"type":"result","subtype":"success","is_error":false,"result":"done it","num_turns":1}`+"\n")
		}, Outcome{Status: "completed", Summary: "no report: its output is kept", Recovered: Adopted}, "done it"},
		{"claude's error left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, ownerFile), gone("claude"))
			write(t, filepath.Join(dir, stdoutFile), `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"gave up"}`)
		}, Outcome{Status: "failed", Summary: "claude reported an error (error_max_turns)", Failure: "agent-error", Recovered: Adopted}, "gave up"},
		{"claude cut off", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, ownerFile), gone("claude"))
			write(t, filepath.Join(dir, stdoutFile), `{"type":"resu`)
		}, Outcome{Status: "error", Summary: InterruptedSummary, Recovered: Interrupted}, ""},
		{"codex's last message left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, ownerFile), gone("codex"))
			write(t, filepath.Join(dir, stdoutFile), "working\n")
			write(t, filepath.Join(dir, lastMessageFile), "all done\n")
		}, Outcome{Status: "completed", Summary: "no report: its output is kept", Recovered: Adopted}, "all done\n"},
		{"a command's stdout left", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, stdoutFile), "half of it")
		}, Outcome{Status: "error", Summary: InterruptedSummary, Recovered: Interrupted}, ""},
		{"settled by a resume killed before its finish", func(t *testing.T, _ *Engine, _ int, dir string) {
			write(t, filepath.Join(dir, exitFile), `{"status":"error","summary":"`+InterruptedSummary+`","recovered":"interrupted"}`)
		}, Outcome{Status: "error", Summary: InterruptedSummary, Recovered: Interrupted}, ""},
		{"manual", func(t *testing.T, _ *Engine, _ int, dir string) { write(t, filepath.Join(dir, waitingFile), "") },
			Outcome{Status: StatusWaiting}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, shAgent("exit 99"))
			seq, dir := started(t, e)
			c.leave(t, e, seq, dir)
			got, err := e.Recover(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("recovered %+v", got)
			}
			out := got[0].Outcome
			c.want.Summary = strings.ReplaceAll(c.want.Summary, "RUNDIR", dir)
			if out.Status != c.want.Status || out.Summary != c.want.Summary || out.Failure != c.want.Failure ||
				out.Recovered != c.want.Recovered || string(out.Output) != c.output || got[0].Point != implement.Point {
				t.Fatalf("recovered %+v\nwant %+v", got[0], c.want)
			}
			if procs := agentProcesses(e.ID, seq, e.Workdir); len(procs) > 0 {
				t.Errorf("agent processes left running: %v", procs)
			}
			r := onlyRecord(t, e)
			if c.want.Status == StatusWaiting {
				if r.Finished() || !exists(dir) {
					t.Fatalf("a manual dispatch was settled: %+v", r)
				}
				if w := out.Waiting; w == nil || w.Output != filepath.Join(dir, reportFile) || w.PromptFile != filepath.Join(dir, promptFile) ||
					strings.Join(w.Finish, " ") != "git crucible dispatch finish 1 --status completed --output "+w.Output+" --pipeline "+e.ID {
					t.Fatalf("waiting %+v", w)
				}
				return
			}
			if r.Status != c.want.Status || r.Recovered != c.want.Recovered || r.Failure != c.want.Failure || exists(dir) {
				t.Fatalf("record %+v; run dir left: %v", r, exists(dir))
			}
			if c.output != "" && kept(t, e, r.Output) != c.output {
				t.Errorf("kept output %q", kept(t, e, r.Output))
			}
			// Settled once: a second resume has nothing to do.
			if again, err := e.Recover(t.Context()); err != nil || len(again) != 0 {
				t.Fatalf("second Recover: %+v, %v", again, err)
			}
		})
	}
}

// TestRetryAfterInterrupted: the walk dispatches an interrupted point
// again as a new seq that names the old one.
func TestRetryAfterInterrupted(t *testing.T) {
	e := newEngine(t, shAgent(`printf 'status: completed\n' >"$CRUCIBLE_OUTPUT"`))
	started(t, e)
	got, err := e.Recover(t.Context())
	if err != nil || len(got) != 1 || got[0].Outcome.Recovered != Interrupted {
		t.Fatalf("recovered %+v, %v", got, err)
	}
	retry := implement
	retry.RetryOf = &got[0].Seq
	out, err := e.Dispatch(t.Context(), retry)
	if err != nil || out.Seq != 2 || out.Status != "completed" {
		t.Fatalf("retry %+v, %v", out, err)
	}
	recs, _ := e.Dispatches(t.Context())
	if len(recs) != 2 || recs[1].RetryOf == nil || *recs[1].RetryOf != 1 || recs[1].Point != implement.Point {
		t.Fatalf("records %+v", recs)
	}
}

// TestRecoverSweeps: a run directory a killed engine left after recording
// its finish is removed; a hook's dispatch (no step) is not the engine's.
func TestRecoverSweeps(t *testing.T) {
	e := newEngine(t, shAgent(`printf 'status: completed\n' >"$CRUCIBLE_OUTPUT"`))
	if _, err := e.Dispatch(t.Context(), implement); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.RunDir(1), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.StartDispatch(t.Context(), e.ID, pipeline.DispatchRequest{Role: "reviewer", Phase: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Recover(t.Context())
	if err != nil || len(got) != 0 {
		t.Fatalf("recovered %+v, %v", got, err)
	}
	if exists(e.RunDir(1)) {
		t.Fatal("the finished dispatch's run directory stayed")
	}
}
