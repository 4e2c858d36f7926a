package manifest

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Manifest is a dispatch run's manifest: the seed's dispatch.yaml schema.
// The engine's own state (statuses, commit SHAs, level boundaries, the
// backup branch, the fix loop) is part of it, as in the seed, so a
// manifest read back after a kill says where the run stood.
type Manifest struct {
	Goal                    string
	Status                  RunStatus
	MaxParallel             int    // agents at once, critique agents included; 5 when not given
	Created                 string // informational
	Verify                  Verify
	Validation              Validation
	Critique                Critique
	Commits                 Commits
	LevelBoundaries         map[int]string // level -> the commit before its first commit
	LevelHeads              map[int]string // level -> its last commit: the engine's, not in the seed's file
	BackupBranch            string
	FixLoop                 FixLoop
	Results                 []ResultCommit
	UnexpectedModifications string // ask | accept
	DeviationHandling       DeviationHandling
	Tasks                   []Task // in the order listed

	lines manifestLines
	index map[string]int // task id -> index in Tasks
	level []int          // Tasks[i]'s level, from 1
}

// manifestLines keeps where things are, for validation errors.
type manifestLines struct {
	validation int
	tasks      []taskLines
}

// Verify is the full verification pipeline.
type Verify struct {
	Workdir           string
	Build, Test, Lint string
	Custom            []NamedCommand
}

// NamedCommand is one of verify's custom commands.
type NamedCommand struct{ Name, Command string }

// Validation is the per-commit fast gate: a command, or the declared
// absence of one with a reason (the full verify pipeline is then used).
type Validation struct {
	FastGate   string
	NoFastGate bool
	Reason     string
}

// Critique is the critique gate's settings, global or a task's override.
type Critique struct {
	Enabled bool
	Agent   string // "critique" when not given
	Prompt  string // a task's own instructions
}

// Commits is how a level's work becomes commits.
type Commits struct {
	Strategy      string // per-task | single | grouped
	Approval      string // ask-once | ask-each | auto; "" when the manifest does not say
	MessageSource string // objective | notes
}

// FixLoop is the verification fix loop's state.
type FixLoop struct {
	InProgress      bool
	Iteration       int
	RebaseBase      string
	AffectedCommits []string
}

// ResultCommit is one commit of the run's results.
type ResultCommit struct {
	SHA, Message string
	Files, Tasks []string
}

// DeviationHandling says who handles deviations the tasks report.
type DeviationHandling struct {
	Threshold  string // minor | moderate | major
	AutoFix    bool
	EscalateTo string // user | greybeard
}

// Task is one task of the manifest.
type Task struct {
	ID           string
	Type         string // feature | bugfix; none for explore agents
	Agent        string
	DependsOn    []string
	Receives     []string // whose output the prompt gets: DependsOn unless given
	Status       TaskStatus
	CommitSHA    string
	FixingSource string    // critique | verification, while fixing
	Critique     *Critique // nil: the global setting
	ValidateFix  ValidateFix
	CommitGroup  string
	// Files are the files the task's plan says it modifies: the
	// manifest's files key (crucible's addition, as the plan writer's
	// tasks carry them) or else its plan.md's "Files to Modify".
	Files []string
	Line  int // where the task starts in the manifest
}

// ValidateFix is a task's mutation-testing validation.
type ValidateFix struct {
	Enabled     bool
	TestCommand string
}

// RunStatus is the run's status.
type RunStatus string

// The run's statuses, as the seed has them.
const (
	RunPending    RunStatus = "pending"
	RunInProgress RunStatus = "in-progress"
	RunCompleted  RunStatus = "completed"
	RunFailed     RunStatus = "failed"
	// RunEscalated is crucible's: a level's amendment rounds reached the
	// seed's escalation, and a person decides.
	RunEscalated RunStatus = "escalated"
)

// TaskStatus is a task's status.
type TaskStatus string

// A task's statuses, as the seed has them.
const (
	Pending    TaskStatus = "pending"
	Dispatched TaskStatus = "dispatched"
	Committed  TaskStatus = "committed"
	Completed  TaskStatus = "completed"
	Failed     TaskStatus = "failed"
	Fixing     TaskStatus = "fixing"
)

// Error is what is wrong with a manifest, at a line (0: the whole file).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func errorf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Errors is every problem validation found, in line order.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Parse reads a manifest, YAML or (when name ends in .toml) TOML, and
// validates it. name is for errors only. A syntax or schema error stops at
// the first problem and is an *Error; the graph's problems are all
// reported, as Errors.
func Parse(name string, data []byte) (*Manifest, error) {
	m, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	if errs := m.validate(); len(errs) > 0 {
		for _, e := range errs {
			e.File = name
		}
		return nil, errs
	}
	return m, nil
}

func parse(name string, data []byte) (*Manifest, error) {
	named := func(e *Error) error {
		e.File = name
		return e
	}
	if len(data) > MaxSize {
		return nil, named(errorf(0, "%d bytes, over the %d-byte limit", len(data), MaxSize))
	}
	tree := yamlTree
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		tree = tomlTree
	}
	root, err := tree(data)
	if err != nil {
		return nil, named(err.(*Error))
	}
	m, err := decodeManifest(root)
	if err != nil {
		return nil, named(err.(*Error))
	}
	return m, nil
}
