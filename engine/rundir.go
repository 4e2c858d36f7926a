package engine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/pipeline"
)

// The files of a run directory.
const (
	promptFile      = "prompt.md"     // CRUCIBLE_PROMPT
	reportFile      = "output.yaml"   // CRUCIBLE_OUTPUT
	ownerFile       = "agent.json"    // the running agent: ownerRecord
	exitFile        = "exit.json"     // how it ended: exitRecord
	stdoutFile      = "stdout"        // the agent's stdout, which outlives the engine
	stderrFile      = "stderr"        // the agent's stderr
	lastMessageFile = "last-message"  // codex's --output-last-message
	outputFile      = "output"        // its answer when it wrote no report
	waitingFile     = "waiting"       // a manual dispatch: a person answers
	formatFile      = "report-format" // the report it must write: prompt.ReportTask or ReportFindings
)

// Limits on what is read back from a run directory: the agent runner's
// default limit on a report (a larger one is refused as bad), and more
// than it keeps of an answer.
const (
	maxReport = 8 << 20
	maxOutput = 16 << 20
	maxRecord = 64 << 10
)

var errNotKept = errors.New("not adopted")

// ownerRecord names a running agent so that a successor engine can tell
// it from a process that reused its pid after it ended.
type ownerRecord struct {
	PID      int       `json:"pid"`
	Start    string    `json:"start"` // its start time in clock ticks since boot (/proc/PID/stat)
	Boot     string    `json:"boot"`
	Deadline time.Time `json:"deadline"` // when its timeout and grace have passed
	// Kind says how to read its answer, whatever the configuration says
	// when a successor reads it.
	Kind agent.Kind `json:"kind,omitempty"`
}

// exitRecord is how a dispatch's agent ended, as the engine saw it: what
// its finish will say.
type exitRecord struct {
	Status  string `json:"status"` // completed | failed | error
	Summary string `json:"summary"`
	Failure string `json:"failure,omitempty"`
	// Recovered: how a resumed engine settled it, when it did.
	Recovered string `json:"recovered,omitempty"`
	// What the finish keeps of how the agent went: its exit status (nil
	// when nobody saw it exit), the tail of its stderr when it failed,
	// what its client refused it and what its client says it cost.
	ExitCode *int            `json:"exit_code,omitempty"`
	Stderr   string          `json:"stderr,omitempty"`
	Denials  []string        `json:"denials,omitempty"`
	Usage    *pipeline.Usage `json:"usage,omitempty"`
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(path, append(b, '\n'), 0o644)
}

// readJSON reads path into v; ok is false when there is no such file.
func readJSON(path string, v any) (ok bool, err error) {
	b, err := fsutil.ReadRegular(path, maxRecord, errNotKept)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, v)
}

// readKept reads a file of a run directory, at most limit bytes: nil when
// there is none.
func readKept(dir, name string, limit int64) ([]byte, error) {
	b, err := fsutil.ReadRegular(filepath.Join(dir, name), limit, errNotKept)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// keep leaves in dir how dispatch's agent ended: its answer, when it
// wrote no report, then its exit record, which says the rest is there.
func keep(dir string, res agent.Result, ex exitRecord) error {
	if res.Report == nil && res.Output != nil {
		if err := os.WriteFile(filepath.Join(dir, outputFile), res.Output, 0o644); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, exitFile), ex)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
