package enforce

import (
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
)

// The dispatcher names the agent making a commit through these variables;
// commit-msg turns them into trailers and post-commit into provenance.
const (
	EnvPipeline = "CRUCIBLE_PIPELINE" // the pipeline the agent works for
	EnvTask     = "CRUCIBLE_TASK"
	EnvSeq      = "CRUCIBLE_SEQ"
	EnvRole     = "CRUCIBLE_ROLE"
)

// Agent is who makes a commit inside a pipeline, as the dispatcher said.
type Agent struct {
	Task, Seq int // 0: not given
	Role      string
}

// AgentFromEnv reads the dispatcher's variables through getenv: a task or
// seq that is not a positive decimal number is not given.
func AgentFromEnv(getenv func(string) string) Agent {
	number := func(name string) int {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || strconv.Itoa(n) != v {
			return 0
		}
		return n
	}
	return Agent{Task: number(EnvTask), Seq: number(EnvSeq), Role: strings.TrimSpace(getenv(EnvRole))}
}

// CommitTrailers are the trailers of a commit made in pipeline id's phase.
func CommitTrailers(id string, phase int, a Agent) []Trailer {
	t := []Trailer{{Key: TrailerPipeline, Value: id}, {Key: TrailerPhase, Value: strconv.Itoa(phase)}}
	if a.Task > 0 {
		t = append(t, Trailer{Key: TrailerTask, Value: strconv.Itoa(a.Task)})
	}
	if a.Seq > 0 {
		t = append(t, Trailer{Key: TrailerSeq, Value: strconv.Itoa(a.Seq)})
	}
	return t
}

// Provenance is the note of a commit made in pipeline id's phase while the
// pipeline ref was at ledgerHead, written by clone writer.
func Provenance(id string, phase int, a Agent, ledgerHead, writer string) notes.Provenance {
	return notes.Provenance{Pipeline: id, Phase: phase, Task: a.Task, Seq: a.Seq, Role: a.Role,
		LedgerHead: ledgerHead, Writer: writer}
}

// ProvenanceLine is the note line of a commit agent a made for pipeline
// id in phase, its chain at ledgerHead: the engine's commits and a task
// run's, which the post-commit hook never sees. The writer is this
// clone's, none before init.
func ProvenanceLine(repo *gitext.Repo, id string, phase int, a Agent, ledgerHead string) ([]byte, error) {
	writer := ""
	if w, err := pipeline.LoadWriter(repo); err == nil && w != nil {
		writer = w.ID
	}
	return Provenance(id, phase, a, ledgerHead, writer).Encode()
}
