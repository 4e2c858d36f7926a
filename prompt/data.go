package prompt

import (
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/report"
)

// Report formats: what an agent writes at $CRUCIBLE_OUTPUT (THE AGENT
// PROTOCOL; crucible's own output.yaml and findings formats).
const (
	// ReportTask is a task agent's output.yaml: status, files-modified,
	// verification-summary, deviations, exports, notes, error.
	ReportTask = "task"
	// ReportFindings is a red-team or review round's findings: fatal,
	// significant and minor lists of {title, file, detail}.
	ReportFindings = "findings"
	// ReportCritique is a level's gate critique (the seed's
	// gate-critique.yaml): tasks, verdict, issues, new-tests, notes.
	ReportCritique = "critique"
)

// Data is what a template renders. Maps are rendered with
// missingkey=error, so a template naming an input the step does not have
// fails instead of prompting with "<no value>".
type Data struct {
	Goal     string // the user's goal, verbatim
	Mode     string // feature | refactor
	Pipeline string // the pipeline id (CRUCIBLE_PIPELINE)

	Phase     int    // 1-4
	PhaseName string // Design, Plan, Execute, Completion
	Step      string // the spec step's id
	Role      string // the role dispatched (CRUCIBLE_ROLE)

	// Round is the gate or review round, 1-based; 0 outside them. For a
	// fixer it is the round whose findings it answers.
	Round     int
	MaxRounds int

	// Artifact is what a gate or review round examines and a fixer fixes.
	Artifact Artifact
	// Inputs maps each input the step names to a work-tree path (a file
	// artifact) or a value (a report export, as text).
	Inputs map[string]string
	// Outputs maps each file the step must write to its work-tree path.
	Outputs map[string]string
	// Exports are the report exports the step is expected to provide; for
	// a fixer, those of its artifact's producer, so that a revised plan
	// exports its revised task list.
	Exports []string

	Task *report.PlanTask // the plan task being built; nil outside Phase 3's tasks
	// Upstream is what a task of a task DAG receives from the tasks it
	// depends on: their reports, as Markdown; "" when none.
	Upstream string

	// Findings are the findings a fixer answers (the round just scored);
	// nil for every other dispatch: a fresh reviewer is never anchored on
	// the previous round.
	Findings *report.Findings

	// Reviewed are the committed tasks a level's critique reviews; nil
	// for every other dispatch.
	Reviewed []Reviewed
	// Issues are what a task's fix agent answers in an amendment round:
	// the critique's issues of its task, or the fast gate's failure at
	// its rebuilt commit. nil for a task's first dispatch.
	Issues []report.Issue

	TestCommand string // the project's test command

	Report Report // where and in which format the agent reports
}

// Reviewed is a task under critique: its commit ("" when it changed
// nothing) and its report.
type Reviewed struct {
	ID     string
	Commit string
	Files  []string // the files its plan names
	Output string   // its output.yaml
	// Instructions are the manifest's critique.prompt for the task (its
	// own, else the run's); "" for the standard review.
	Instructions string
}

// Artifact is a named artifact: a work-tree path, or for "diff" a file the
// engine wrote holding the change under review.
type Artifact struct {
	Name string
	Path string
}

// Report says where the agent writes its report and in which format.
type Report struct {
	Path   string // the value of $CRUCIBLE_OUTPUT
	Format string // ReportTask or ReportFindings
}

// Commands are what an agent of a dispatch may run: the project's test
// command and the task's fast gate, when there are.
func Commands(test string, task *report.PlanTask) []string {
	out := []string{test}
	if task != nil {
		out = append(out, task.FastGate)
	}
	return slices.DeleteFunc(out, func(c string) bool { return strings.TrimSpace(c) == "" })
}
