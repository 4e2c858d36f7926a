package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/pipeline"
)

// BaselineError is the project's test command failing before a build
// began: every agent would run, and Phase 4 would find what was broken
// already. Log keeps its whole output; Failing are the failures it names
// (Failures), none when it names none that can be recognised.
type BaselineError struct {
	Command string
	Exit    int
	Tail    string // the output's last lines
	Log     string
	Failing []string
}

// Known is the known-failing baseline e records, for a build that goes on
// (build --baseline-fails): WalkOptions.Baseline.
func (e *BaselineError) Known() *pipeline.BaselineData {
	return &pipeline.BaselineData{Command: e.Command, Exit: e.Exit, Failing: e.Failing}
}

func (e *BaselineError) Error() string {
	return fmt.Sprintf("the project's test command fails before the build begins: %s (exit %d)", e.Command, e.Exit)
}

// baselineTail is how many lines of a failing baseline's output are told.
const baselineTail = 15

// CheckBaseline runs the project's test command once in the work tree
// before a build records anything; a failure is a *BaselineError, its
// output kept in the repository's crucible directory.
func CheckBaseline(ctx context.Context, r *gitext.Repo, command string) error {
	if command == "" {
		return nil
	}
	code, out, err := runShell(ctx, r.WorkTree, command)
	switch {
	case err != nil:
		return fmt.Errorf("the project's test command: %w", err)
	case code == 0:
		return nil
	}
	log := filepath.Join(r.CrucibleDir(), "baseline.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(log, out, 0o644); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return &BaselineError{Command: command, Exit: code, Tail: strings.Join(lines[max(0, len(lines)-baselineTail):], "\n"), Log: log,
		Failing: Failures(out)}
}
