package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/pipeline"
)

// Request is one dispatch as the agent protocol hands it to an agent.
type Request struct {
	Prompt     []byte // on the agent's stdin, and in PromptFile
	PromptFile string // CRUCIBLE_PROMPT: written before the agent starts
	Output     string // CRUCIBLE_OUTPUT: where the agent writes its report; its directory exists, it does not
	Workdir    string // CRUCIBLE_WORKDIR: the agent's working directory
	Pipeline   string
	Seq        int
	Role       string
	Template   string
	Phase      int
	Task       string // "" outside tasks
	Round      int    // gate or review round, 1-based; 0 outside them
	// Commands are what the agent may run besides reading: the project's
	// test command and the task's fast gate (see Access).
	Commands []string
	// StdoutFile and StderrFile, when set, are files the agent's stdout
	// and stderr go to instead of pipes: they outlive the engine, so that
	// Adopt can read the answer of an agent that outlived it. They must
	// not exist. Read back, they are bounded as pipes are (head and tail).
	StdoutFile, StderrFile string
	// LastMessageFile is where codex writes its last message
	// (--output-last-message); "" for a temporary file.
	LastMessageFile string
}

// Env is the protocol's environment for the dispatch.
func (r Request) Env() []string {
	round := ""
	if r.Round > 0 {
		round = strconv.Itoa(r.Round)
	}
	return []string{
		"CRUCIBLE_PIPELINE=" + r.Pipeline, "CRUCIBLE_SEQ=" + strconv.Itoa(r.Seq), "CRUCIBLE_ROLE=" + r.Role,
		"CRUCIBLE_TEMPLATE=" + r.Template, "CRUCIBLE_PHASE=" + strconv.Itoa(r.Phase), "CRUCIBLE_TASK=" + r.Task,
		"CRUCIBLE_ROUND=" + round, "CRUCIBLE_OUTPUT=" + r.Output, "CRUCIBLE_PROMPT=" + r.PromptFile,
		"CRUCIBLE_WORKDIR=" + r.Workdir,
	}
}

func (r Request) check() error {
	for name, p := range map[string]string{"prompt file": r.PromptFile, "output": r.Output, "workdir": r.Workdir} {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("dispatch %d: the %s path %q is not absolute", r.Seq, name, p)
		}
	}
	for what, p := range map[string]string{"report": r.Output, "stdout": r.StdoutFile, "stderr": r.StderrFile, "last message": r.LastMessageFile} {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return fmt.Errorf("dispatch %d: the %s path %q is not absolute", r.Seq, what, p)
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("dispatch %d: %s exists already: it would be taken for the agent's %s", r.Seq, p, what)
		}
	}
	return nil
}

// Result is what a dispatch produced, also when it failed.
type Result struct {
	Agent    string
	Kind     Kind
	Argv     []string // what was started; nil for manual
	ExitCode int      // -1 when it did not exit by itself
	Duration time.Duration
	Stdout   Captured
	Stderr   Captured
	// Report is what the agent wrote at CRUCIBLE_OUTPUT, nil when nothing.
	Report []byte
	// Output is the agent's answer as text: claude's "result", codex's
	// last message, a command's stdout. For claude and codex it is the
	// report when the agent wrote none (the engine decides).
	Output []byte
	// Usage is what the client says the dispatch cost (claude, codex);
	// nil when it says nothing.
	Usage *pipeline.Usage
	// Denials are what the client refused the agent, as "Tool target"
	// (claude's permission_denials).
	Denials []string
}

// FailureKind is how a dispatch failed, for the engine to record.
type FailureKind string

const (
	NotStarted FailureKind = "not-started" // the program could not be started
	TimedOut   FailureKind = "timeout"     // the agent's timeout passed; its process group was killed
	Cancelled  FailureKind = "cancelled"   // the run was interrupted; its process group was killed
	Signalled  FailureKind = "signalled"   // killed by a signal we did not send
	ExitStatus FailureKind = "exit"        // exited non-zero
	BadReport  FailureKind = "bad-report"  // CRUCIBLE_OUTPUT is not a regular file, too large, or not the report required
	NoReport   FailureKind = "no-report"   // it exited 0 but wrote no report where one is required
	Reported   FailureKind = "reported"    // its report says it failed (status: failed)
	BadOutput  FailureKind = "bad-output"  // claude printed no result it could be read from
	AgentError FailureKind = "agent-error" // the client said the session failed (claude's is_error, codex's turn.failed)
	APIError   FailureKind = "api-error"   // the client's model API refused it (a status such as 401, 429, 529)
	Tampered   FailureKind = "tampered"    // it changed the repository's hooks or their config (put back)
)

// Failure is a dispatch that did not finish well. Result still holds all
// that was captured.
type Failure struct {
	Kind     FailureKind
	ExitCode int    // ExitStatus
	Signal   string // Signalled
	Detail   string
	// Said is the last of what the agent printed on stderr, when it
	// failed by its exit: its own words for why.
	Said string
}

func (f *Failure) Error() string {
	var msg string
	switch f.Kind {
	case ExitStatus:
		msg = fmt.Sprintf("the agent exited with status %d", f.ExitCode)
	case Signalled:
		msg = "the agent was killed by signal " + f.Signal
	default:
		msg = f.Detail
	}
	if f.Said != "" {
		msg += ": " + f.Said
	}
	return msg
}

// Waiting is a manual dispatch: nothing ran; a person (or another
// orchestrator) reads PromptFile, writes the report at Output and runs
// Finish.
type Waiting struct {
	PromptFile string
	Output     string
	Finish     []string // git crucible dispatch finish <seq> --status completed --output <Output> --pipeline <id>
}

// WaitingFor is what a person is to do to answer req: also after a
// resume, for a manual dispatch an earlier engine left waiting.
func WaitingFor(req Request) *Waiting {
	finish := []string{"git", "crucible", "dispatch", "finish", strconv.Itoa(req.Seq), "--status", "completed", "--output", req.Output}
	if req.Pipeline != "" {
		finish = append(finish, "--pipeline", req.Pipeline)
	}
	return &Waiting{PromptFile: req.PromptFile, Output: req.Output, Finish: finish}
}

func (w *Waiting) Error() string {
	return "waiting for a person to answer: the prompt is in " + w.PromptFile
}

// Runner runs agents. Its zero value uses the defaults.
type Runner struct {
	Grace      time.Duration // between SIGTERM and SIGKILL (default 10s)
	MaxCapture int           // bytes kept of stdout and of stderr each: head and tail (default 8 MiB)
	MaxReport  int64         // largest report read (default 8 MiB)
	// Started, when set, is told the agent's pid (its process group's id
	// too) as soon as it runs, before anything waits for it: the engine
	// records it, so that a successor can find an agent that outlived it.
	Started func(pid int)
	// Start, when set, starts the agent's process instead of cmd.Start: in
	// a process group of its own, with its group's id the process's pid.
	Start func(cmd *exec.Cmd) error
}

// GracePeriod is the time between SIGTERM and SIGKILL.
func (r *Runner) GracePeriod() time.Duration { return positiveOr(r.Grace, 10*time.Second) }
func (r *Runner) maxCapture() int            { return positiveOr(r.MaxCapture, 8<<20) }
func (r *Runner) maxReport() int64           { return positiveOr(r.MaxReport, 8<<20) }

func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Run runs agent a for req with the default Runner.
func Run(ctx context.Context, a Agent, req Request) (Result, error) {
	var r Runner
	return r.Run(ctx, a, req)
}

// Run writes the prompt file and runs a for req: in its own process group,
// the prompt on stdin, in req.Workdir, with the protocol's environment,
// until it exits, its timeout passes or ctx ends (then the whole group is
// sent SIGTERM and, after the grace period, SIGKILL). An agent that failed
// gives a *Failure, a manual one a *Waiting; other errors are ours.
func (r *Runner) Run(ctx context.Context, a Agent, req Request) (Result, error) {
	res := Result{Agent: a.Name, Kind: a.Kind, ExitCode: -1}
	if err := req.check(); err != nil {
		return res, err
	}
	for _, dir := range []string{filepath.Dir(req.PromptFile), filepath.Dir(req.Output)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return res, err
		}
	}
	if err := os.WriteFile(req.PromptFile, req.Prompt, 0o644); err != nil {
		return res, err
	}
	if a.Kind == Manual {
		return res, WaitingFor(req)
	}
	lastMessage := req.LastMessageFile
	if a.Kind == Codex && lastMessage == "" {
		dir, err := os.MkdirTemp("", "crucible-codex-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		lastMessage = filepath.Join(dir, "last-message")
	}
	res.Argv = a.Argv(req.Role, req.Commands, lastMessage)
	timeout := positiveOr(a.Timeout, DefaultTimeout)
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	failure, err := r.start(runCtx, &res, a, req)
	if err != nil {
		return res, err
	}
	if failure != nil && failure.Kind == TimedOut {
		failure.Detail = fmt.Sprintf("the agent did not finish within its timeout of %s: its process group was killed", timeout)
	}
	_, answerFailure := r.answer(&res, req.Output, lastMessage)
	f := firstFailure(failure, answerFailure)
	if failure != nil && failure.Kind == ExitStatus && answerFailure != nil && (answerFailure.Kind == APIError || answerFailure.Kind == AgentError) {
		f = answerFailure // the client's own account says more than its exit status
	}
	if f == nil {
		return res, nil
	}
	if f.Kind == ExitStatus || f.Kind == Signalled {
		f.Said = oneLine(lastLine(res.Stderr.Bytes()), 300)
	}
	return res, f
}

// lastLine is the last line of b that says something.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Adopt reads what agent a, run for req with its output in files, left
// when the one who ran it did not see it end (an engine killed while it
// ran): its report, its stdout and stderr (head and tail, as Run keeps
// them), its answer derived as Run derives it. Its exit status is lost
// (ExitCode -1): answered says whether what it left shows it finished:
// a report, claude's result (an error too), codex's last message. An
// agent that answered badly gives a *Failure, as from Run.
func (r *Runner) Adopt(a Agent, req Request) (res Result, answered bool, err error) {
	res = Result{Agent: a.Name, Kind: a.Kind, ExitCode: -1}
	var refused [2]*Failure
	for i, s := range []struct {
		file string
		kept *Captured
	}{{req.StdoutFile, &res.Stdout}, {req.StderrFile, &res.Stderr}} {
		if *s.kept, err = readCaptured(s.file, r.maxCapture()); errors.As(err, &refused[i]) {
			err = nil
		}
		if err != nil {
			return res, false, err
		}
	}
	answered, f := r.answer(&res, req.Output, req.LastMessageFile)
	if f = firstFailure(refused[0], refused[1], f); f != nil {
		return res, answered, f
	}
	return res, answered, nil
}

// answer reads the report at output and derives res's answer from what
// the agent printed, or, for codex, wrote at lastMessage; answered says
// whether the agent gave one of its own (see Adopt).
func (r *Runner) answer(res *Result, output, lastMessage string) (answered bool, f *Failure) {
	report, f := readReport(output, r.maxReport())
	res.Report, answered = report, report != nil
	switch res.Kind {
	case Claude:
		c, claudeFailure := readClaude(res.Stdout)
		res.Output, res.Usage, res.Denials = c.Output, c.Usage, c.Denials
		answered = answered || claudeFailure == nil || claudeFailure.Kind == AgentError || claudeFailure.Kind == APIError
		f = firstFailure(f, claudeFailure)
	case Codex:
		c, codexFailure := readCodex(res.Stdout)
		res.Output, res.Usage = c.Output, c.Usage
		if msg, bad := readReport(lastMessage, r.maxReport()); bad == nil && msg != nil {
			res.Output, answered = msg, true
		}
		f = firstFailure(f, codexFailure)
	default:
		res.Output = res.Stdout.Bytes()
	}
	return answered, f
}

var errTimeout = errors.New("agent timeout")

func firstFailure(fs ...*Failure) *Failure {
	for _, f := range fs {
		if f != nil {
			return f
		}
	}
	return nil
}

// start runs the process to its end and fills res's exit, duration and
// captured output.
func (r *Runner) start(ctx context.Context, res *Result, a Agent, req Request) (*Failure, error) {
	if err := ctx.Err(); err != nil {
		return &Failure{Kind: Cancelled, Detail: "the dispatch was cancelled before the agent started"}, nil
	}
	stdin, err := os.Open(req.PromptFile)
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	cmd := exec.Command(res.Argv[0], res.Argv[1:]...)
	cmd.Dir = req.Workdir
	cmd.Env = environ(a, req)
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	collect, err := outputsTo(cmd, r.maxCapture(), req.StdoutFile, req.StderrFile)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	start := (*exec.Cmd).Start
	if r.Start != nil {
		start = r.Start
	}
	if err := start(cmd); err != nil {
		res.Stdout, res.Stderr, _ = collect(0) // nothing ran to write them
		return &Failure{Kind: NotStarted, Detail: fmt.Sprintf("could not start %s: %v", res.Argv[0], err)}, nil
	}
	if r.Started != nil {
		r.Started(cmd.Process.Pid) // before Wait can reap it: its pid stays its own meanwhile
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pgid := cmd.Process.Pid
	var failure *Failure
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		failure = &Failure{Kind: Cancelled, Detail: "the dispatch was cancelled: the agent's process group was killed"}
		if errors.Is(context.Cause(ctx), errTimeout) {
			failure = &Failure{Kind: TimedOut}
		}
		r.Terminate(pgid)
		waitErr = <-exited
	}
	res.Duration = time.Since(begin)
	r.Terminate(pgid) // what it left behind in its group ends with it
	var refused *Failure
	if res.Stdout, res.Stderr, err = collect(r.GracePeriod()); errors.As(err, &refused) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if cmd.ProcessState == nil {
		return nil, fmt.Errorf("waiting for %s: %w", res.Argv[0], waitErr)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Exited() {
		res.ExitCode = ws.ExitStatus()
	}
	switch {
	case failure != nil:
	case ws.Signaled():
		failure = &Failure{Kind: Signalled, Signal: signalName(ws.Signal())}
	case res.ExitCode != 0:
		failure = &Failure{Kind: ExitStatus, ExitCode: res.ExitCode}
	}
	return firstFailure(failure, refused), nil
}

// Terminate sends process group pgid SIGTERM, waits for it to empty for
// the grace period, then sends SIGKILL.
func (r *Runner) Terminate(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // nobody left
	}
	deadline := time.Now().Add(r.GracePeriod())
	for time.Now().Before(deadline) {
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// groupAlive reports whether a process of group pgid still runs. A zombie
// does not count: where nothing reaps orphans (a container whose first
// process is no init), those that obeyed SIGTERM would otherwise look
// alive until SIGKILL. Without /proc, any member counts.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold anything but ends at the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}

func signalName(s syscall.Signal) string {
	for _, n := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGKILL, "SIGKILL"}, {syscall.SIGTERM, "SIGTERM"}, {syscall.SIGINT, "SIGINT"}, {syscall.SIGSEGV, "SIGSEGV"},
		{syscall.SIGABRT, "SIGABRT"}, {syscall.SIGHUP, "SIGHUP"}, {syscall.SIGPIPE, "SIGPIPE"}} {
		if n.sig == s {
			return n.name
		}
	}
	return fmt.Sprintf("%d (%s)", int(s), s)
}

// environ is the agent's environment: ours, without what would pin its
// git to our repository rather than its work dir, plus its configured
// variables and the protocol's.
func environ(a Agent, req Request) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CRUCIBLE_"):
		case slices.Contains([]string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"}, k):
		default:
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		env = append(env, k+"="+a.Env[k])
	}
	return append(env, req.Env()...)
}

// readReport reads the report at path: nil when there is none; refused
// when it is not a regular file (a symbolic link could make us read, and
// keep forever, any file of the user's) or is larger than max.
func readReport(path string, max int64) ([]byte, *Failure) {
	data, err := fsutil.ReadRegular(path, max, errBadReport)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Failure{Kind: BadReport, Detail: "the agent's report " + err.Error()}
	}
	return data, nil
}

var errBadReport = errors.New("not read")

// Captured is a bounded copy of an output stream: its head and tail, and
// how much was cut between them.
type Captured struct {
	Head, Tail []byte
	Cut        int64
}

// Bytes is the stream as kept, with a line saying what was cut.
func (c Captured) Bytes() []byte {
	if c.Cut == 0 {
		return slices.Concat(c.Head, c.Tail)
	}
	return slices.Concat(c.Head, fmt.Appendf(nil, "\n[git-crucible: %d bytes cut here]\n", c.Cut), c.Tail)
}

// Last is at most the last n bytes of the stream as kept, starting at a
// line or at a whole UTF-8 character.
func (c Captured) Last(n int) string {
	b := c.Bytes()
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		return string(b[i+1:])
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}

// capture keeps the first and last limit/2 bytes written to it.
type capture struct {
	half  int
	head  []byte
	ring  []byte // the tail, circular from pos once full
	pos   int
	full  bool
	total int64
}

func newCapture(limit int) *capture { return &capture{half: max(limit/2, 1)} }

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.half - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	if len(p) >= c.half {
		c.ring = append(c.ring[:0], p[len(p)-c.half:]...)
		c.pos, c.full = 0, true
		return n, nil
	}
	for len(p) > 0 {
		if !c.full {
			take := min(c.half-len(c.ring), len(p))
			c.ring = append(c.ring, p[:take]...)
			p = p[take:]
			c.full = len(c.ring) == c.half
			continue
		}
		k := copy(c.ring[c.pos:], p)
		c.pos = (c.pos + k) % c.half
		p = p[k:]
	}
	return n, nil
}

func (c *capture) result() Captured {
	tail := c.ring
	if c.full {
		tail = slices.Concat(c.ring[c.pos:], c.ring[:c.pos])
	}
	return Captured{Head: c.head, Tail: tail, Cut: c.total - int64(len(c.head)) - int64(len(tail))}
}
