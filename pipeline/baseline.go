package pipeline

import (
	"errors"
	"fmt"
	"strings"
)

// TypeBaseline records the known-failing baseline: the project's test
// command failed before the build began, and the build went on
// (build --baseline-fails). Its test steps compare their failures with
// these; a resume or a replay reads them here rather than running the
// command again.
const TypeBaseline = "baseline"

// BaselineData is the payload of baseline: the command, its exit status,
// and the lines of its output that name a failure, each in its normal
// form (build.Failures), in order.
type BaselineData struct {
	Command string   `json:"command"`
	Exit    int      `json:"exit"`
	Failing []string `json:"failing,omitempty"`
}

// maxBaselineFailing bounds what one baseline event lists.
const maxBaselineFailing = 10000

func (d *BaselineData) check() error {
	switch {
	case strings.TrimSpace(d.Command) == "":
		return errors.New("baseline: no command")
	case d.Exit == 0:
		return errors.New("baseline: a command that passed is no known-failing baseline")
	case len(d.Failing) > maxBaselineFailing:
		return fmt.Errorf("baseline: %d failures, more than %d", len(d.Failing), maxBaselineFailing)
	}
	for _, f := range d.Failing {
		if strings.TrimSpace(f) == "" || strings.ContainsAny(f, "\n\r") {
			return fmt.Errorf("baseline: failure %q is not one line of text", f)
		}
	}
	return nil
}

func (d *BaselineData) describe() string {
	return fmt.Sprintf("known-failing baseline: %s (exit %d, %s)", d.Command, d.Exit, Failing(len(d.Failing)))
}

// Failing is n failures said in words: "1 failure", "3 failures".
func Failing(n int) string {
	if n == 1 {
		return "1 failure"
	}
	return fmt.Sprintf("%d failures", n)
}

// BaselineView is what status shows of a known-failing baseline: its
// command, how many failures it names, and the steps done against it.
type BaselineView struct {
	Command string   `json:"command"`
	Failing int      `json:"failing"`
	Steps   []string `json:"steps,omitempty"` // "test-suite", "check of task 2", first done first
}
