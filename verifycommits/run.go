package verifycommits

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

// Mode says which cached results a run trusts.
type Mode int

const (
	// UseCache trusts every cached result: a known-good tree passes and a
	// known-bad one fails without running.
	UseCache Mode = iota
	// Retest runs the gate again where it failed or skipped before.
	Retest
	// Force runs the gate everywhere, forgetting what was cached.
	Force
)

// Reuse says whether a cached result stands under m.
func (m Mode) Reuse(r Result) bool {
	switch m {
	case UseCache:
		return true
	case Retest:
		return r.Status == Pass
	}
	return false
}

// runGate runs command with sh -c in dir, as every engine runs a gate
// (fastgate), run starting it and waiting for it: its exit status (128+N
// when killed by signal N) and output. An error is a gate that could not
// start, or ctx ending; the gate's process group is killed then.
func runGate(ctx context.Context, dir, command string, run func(*exec.Cmd) error) (int, []byte, error) {
	code, out, err := fastgate.RunWith(ctx, dir, command, run)
	if err != nil && ctx.Err() == nil {
		return 0, nil, fmt.Errorf("cannot run the gate: %w", err)
	}
	return code, out, err
}

// test runs the gate at one tree in dir and records the result, unless
// the cache holds one that mode lets stand.
func (s *Store) test(ctx context.Context, dir, command, spec, tree string, mode Mode) error {
	return s.testWith(ctx, (*exec.Cmd).Run, dir, command, spec, tree, mode)
}

// testWith is test, run starting the gate and waiting for it (runGate).
func (s *Store) testWith(ctx context.Context, run func(*exec.Cmd) error, dir, command, spec, tree string, mode Mode) error {
	if cached, ok, err := s.Lookup(tree, spec); err != nil || (ok && mode.Reuse(cached)) {
		return err
	}
	start := time.Now()
	code, out, err := runGate(ctx, dir, command, run)
	if err != nil {
		return err
	}
	now, err := gitext.Now()
	if err != nil {
		return err
	}
	r := Result{Tree: tree, Spec: spec, Status: results.StatusOf(code), Exit: code, Time: now.UTC().Truncate(time.Second), Duration: time.Since(start)}
	return s.Record(Outcome{Result: r, Output: out})
}
