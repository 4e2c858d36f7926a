package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/pipeline"
)

// InterruptedSummary is the finish of a dispatch whose agent left nothing
// to adopt: the walk dispatches its point again.
const InterruptedSummary = "interrupted: the engine stopped while it ran"

// Recovered is a dispatch an earlier engine started and did not finish,
// and how Recover settled it. Outcome.Status is "waiting" for a manual
// dispatch, left for a person; "error" with Recovered "interrupted" when
// the walk is to dispatch Record.Point again, with RetryOf Record.Seq.
type Recovered struct {
	pipeline.Record
	Outcome Outcome
}

// pollEvery is how often Recover looks whether an agent it waits for ended.
const pollEvery = 20 * time.Millisecond

// Recover settles every dispatch of the engine (one with a step) that has
// a start and no finish, without running it again: it waits for an agent
// still running (until its deadline, then kills its process group), takes
// the exit record or report it left, and finishes it as interrupted only
// when there is nothing to take. A manual dispatch stays waiting. Run
// directories of finished dispatches are removed.
func (e *Engine) Recover(ctx context.Context) ([]Recovered, error) {
	recs, err := e.Dispatches(ctx)
	if err != nil {
		return nil, err
	}
	var unfinished []pipeline.Record
	for _, r := range recs {
		if !r.Finished() {
			unfinished = append(unfinished, r)
		}
	}
	return e.recover(ctx, unfinished)
}

// recover is Recover of the unfinished dispatches given, in seq order.
func (e *Engine) recover(ctx context.Context, unfinished []pipeline.Record) ([]Recovered, error) {
	var out []Recovered
	for _, r := range unfinished {
		if r.Point.Step == "" {
			continue
		}
		o, err := e.settle(ctx, r)
		if err != nil {
			return out, err
		}
		out = append(out, Recovered{Record: r, Outcome: o})
	}
	return out, e.sweep(ctx)
}

// settle finishes dispatch r from what its run directory and processes say.
func (e *Engine) settle(ctx context.Context, r pipeline.Record) (Outcome, error) {
	dir := e.RunDir(r.Seq)
	req, err := e.request(r.Seq)
	if err != nil {
		return Outcome{}, err
	}
	if exists(filepath.Join(dir, waitingFile)) {
		return Outcome{Seq: r.Seq, Status: StatusWaiting, Waiting: agent.WaitingFor(req)}, nil
	}
	var ex exitRecord
	ended, err := readJSON(filepath.Join(dir, exitFile), &ex)
	if err != nil {
		return Outcome{}, fmt.Errorf("dispatch %d: %s: %w", r.Seq, exitFile, err)
	}
	if !ended {
		// Kept, so that a resume killed before the finish is recorded settles it the same way.
		if ex, err = e.await(ctx, r, req); err != nil {
			return Outcome{}, err
		}
	}
	out := Outcome{Seq: r.Seq, Status: ex.Status, Summary: ex.Summary, Failure: ex.Failure, Recovered: ex.Recovered,
		ExitCode: ex.ExitCode, Stderr: ex.Stderr, Denials: ex.Denials, Usage: ex.Usage}
	if out.Recovered == "" { // the engine's own record: it saw the agent end
		out.Recovered = Adopted
	}
	if out.Report, err = readKept(filepath.Dir(req.Output), filepath.Base(req.Output), maxReport); err != nil && !errors.Is(err, errNotKept) {
		return Outcome{}, fmt.Errorf("dispatch %d: %w", r.Seq, err)
	}
	out.Output = out.Report
	if out.Output == nil {
		if out.Output, err = readKept(dir, outputFile, maxOutput); err != nil {
			return Outcome{}, fmt.Errorf("dispatch %d: %w", r.Seq, err)
		}
	}
	return out, e.finish(ctx, out)
}

// await is how dispatch r ended when the engine that ran it did not see
// it end: it waits for the agent if it still runs, then takes the answer
// it left in its run directory, as the engine would have, and keeps it.
func (e *Engine) await(ctx context.Context, r pipeline.Record, req agent.Request) (exitRecord, error) {
	dir := e.RunDir(r.Seq)
	var o ownerRecord
	if _, err := readJSON(filepath.Join(dir, ownerFile), &o); err != nil {
		return exitRecord{}, fmt.Errorf("dispatch %d: %s: %w", r.Seq, ownerFile, err)
	}
	waited, late, err := e.waitForAgent(ctx, r, o, req.Workdir)
	if err != nil {
		return exitRecord{}, err
	}
	a := e.agentFor(r.Role)
	if o.Kind != "" {
		a.Kind = o.Kind
	}
	res, answered, err := e.Runner.Adopt(a, req)
	// Its exit status died with the engine: what it left says how it went.
	ex := exitOf(res, err)
	ex.Recovered = Adopted
	if waited {
		ex.Recovered = Waited
	}
	var f *agent.Failure
	switch {
	case late:
		ex = exitRecord{Status: "failed", Failure: string(agent.TimedOut), Recovered: Waited,
			Summary: "the agent did not finish within its timeout after the engine stopped: its process group was killed"}
	case err != nil && !errors.As(err, &f):
		return exitRecord{}, fmt.Errorf("dispatch %d: %w", r.Seq, err)
	case f != nil && f.Kind == agent.BadReport:
	case !answered:
		res, ex = agent.Result{}, exitRecord{Status: "error", Summary: InterruptedSummary, Recovered: Interrupted}
	default:
		format, err := readFormat(dir)
		if err != nil {
			return exitRecord{}, fmt.Errorf("dispatch %d: %w", r.Seq, err)
		}
		ex = checked(ex, format, res)
	}
	return ex, keep(dir, res, ex)
}

// waitForAgent waits for dispatch r's agent if it still runs, found by its
// owner record o or, had the engine died before writing that, by its
// environment. At its deadline its process group is killed (late).
func (e *Engine) waitForAgent(ctx context.Context, r pipeline.Record, o ownerRecord, workdir string) (waited, late bool, err error) {
	if o.PID == 0 {
		procs := agentProcesses(e.ID, r.Seq, workdir)
		if len(procs) == 0 {
			return false, false, nil
		}
		pgid, err := syscall.Getpgid(procs[0])
		if err != nil {
			return false, false, nil // it ended meanwhile
		}
		o = newOwner(pgid)
		o.Deadline = e.deadline(r)
	}
	for o.alive() {
		waited = true
		if time.Now().After(o.Deadline) {
			late = true
			break
		}
		select {
		case <-ctx.Done():
			return waited, false, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	if late {
		e.Runner.Terminate(o.PID) // checked alive: its pid is still its own
	}
	// What it left behind ends with it, as when the engine waits itself;
	// found by their environment, not by a pid that may be another's now.
	for _, pid := range agentProcesses(e.ID, r.Seq, workdir) {
		if pgid, err := syscall.Getpgid(pid); err == nil {
			e.Runner.Terminate(pgid)
		}
	}
	return waited, late, nil
}

// deadline is when the agent of r has overrun its timeout: it started
// after its run directory was made (the start event's time is git's
// notion of now, which a user may pin).
func (e *Engine) deadline(r pipeline.Record) time.Time {
	began := time.Now()
	if fi, err := os.Stat(e.RunDir(r.Seq)); err == nil {
		began = fi.ModTime()
	}
	return began.Add(agentTimeout(e.agentFor(r.Role)) + e.Runner.GracePeriod())
}

// sweep removes the run directories of finished dispatches, with their
// agent directories: what a killed engine left after recording a finish.
// The state says which are: every seq started, less those in flight.
// Agent directories in the engine's work tree that no dispatch in flight
// names go too: a kill between making one and starting its dispatch.
func (e *Engine) sweep(ctx context.Context) error {
	st, _, err := e.Service.Load(ctx, e.ID)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(e.runs())
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, d := range entries {
		seq, err := strconv.Atoi(d.Name())
		if err != nil || strconv.Itoa(seq) != d.Name() || !d.IsDir() || seq < 1 || seq > st.Dispatch.Last {
			continue
		}
		if _, inFlight := st.Dispatch.InFlight[d.Name()]; inFlight {
			continue
		}
		if err := e.removeRun(seq); err != nil {
			return err
		}
	}
	return e.sweepAgentDirs(st)
}

// sweepAgentDirs removes the agent directories of the engine's work tree
// that no dispatch in flight names.
func (e *Engine) sweepAgentDirs(st *pipeline.State) error {
	named := map[string]bool{}
	for key := range st.Dispatch.InFlight {
		seq, _ := strconv.Atoi(key)
		if ad, ok, err := e.agentDirOf(seq); err != nil {
			return err
		} else if ok {
			named[ad.Dir] = true
		}
	}
	parent := filepath.Join(e.Workdir, filepath.FromSlash(agent.RunsDir), e.ID)
	entries, err := os.ReadDir(parent)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, d := range entries {
		ad := AgentDir{Dir: filepath.Join(parent, d.Name()), Workdir: e.Workdir}
		if d.IsDir() && !named[ad.Dir] {
			if err := ad.Remove(); err != nil {
				return err
			}
		}
	}
	return nil
}

// agentFor is the agent of role, or one with the default timeout when the
// configuration no longer gives one.
func (e *Engine) agentFor(role string) agent.Agent {
	if e.Agents != nil {
		if a, err := e.Agents.Resolve(role); err == nil {
			return a
		}
	}
	return agent.Agent{}
}

// RecoverLocal is Recover of the dispatches this clone ran (their run
// directory is here): a CI job's dispatch in flight on another machine
// is left to its job, and to its lease.
func (e *Engine) RecoverLocal(ctx context.Context) ([]Recovered, error) {
	recs, err := e.Dispatches(ctx)
	if err != nil {
		return nil, err
	}
	var unfinished []pipeline.Record
	for _, r := range recs {
		if !r.Finished() && exists(e.RunDir(r.Seq)) {
			unfinished = append(unfinished, r)
		}
	}
	return e.recover(ctx, unfinished)
}
