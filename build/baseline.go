package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// BaselineError is the project's test command failing before a build
// began: every agent would run, and Phase 4 would find what was broken
// already. Log keeps its whole output.
type BaselineError struct {
	Command string
	Exit    int
	Tail    string // the output's last lines
	Log     string
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
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = r.WorkTree
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exit):
		return fmt.Errorf("the project's test command: %w", err)
	}
	log := filepath.Join(r.CrucibleDir(), "baseline.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(log, buf.Bytes(), 0o644); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	return &BaselineError{Command: command, Exit: exit.ExitCode(), Tail: strings.Join(lines[max(0, len(lines)-baselineTail):], "\n"), Log: log}
}
