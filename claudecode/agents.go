package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/interop"
	"github.com/git-crucible/git-crucible/pipeline"
)

// The background agents a Recorder waits for are kept, one file per agent
// id, in <git-common-dir>/crucible/claude-agents/<agent id>.json: local
// bookkeeping between a launch and the end Claude Code reports in another
// hook process. The chain holds what happened; these files only say which
// dispatch an agent id belongs to. Every change is made holding the
// directory's lock (claude-agents.lock, an flock), so that a launch and the
// SubagentStop of its agent, which Claude Code may run at the same moment,
// always meet.

// agentRecord is a kept background agent.
type agentRecord struct {
	AgentID   string `json:"agent_id,omitempty"` // "" for an agent launched with none
	SessionID string `json:"session_id"`
	// The dispatch it runs for, once its launch is recorded.
	Pipeline  string `json:"pipeline,omitempty"`
	Seq       int    `json:"seq,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Its SubagentStop, when that came before its launch was recorded.
	Stop *stopRecord `json:"stop,omitempty"`
}

// stopRecord is what a SubagentStop said.
type stopRecord struct {
	AgentType string `json:"agent_type,omitempty"`
	Message   string `json:"message,omitempty"`
}

// event is the SubagentStop s kept, in session.
func (s *stopRecord) event(session string) interop.HookEvent {
	return interop.HookEvent{Event: interop.HookSubagentStop, SessionID: session, AgentType: s.AgentType, Response: s.Message}
}

// agents is the directory of kept agents.
type agents struct{ dir string }

func (r *Recorder) agents() agents {
	return agents{dir: filepath.Join(r.Svc.Repo.CrucibleDir(), "claude-agents")}
}

// agentKey is the file name an agent id is kept under, "" for an id that
// cannot be one.
func agentKey(id string) string {
	if pipeline.CheckName("agent id", id) != nil {
		return ""
	}
	return id
}

// maxRecord bounds a kept agent's file: a last message is kept in it.
const maxRecord = 16 << 20

// errNotRecord refuses a kept agent's file that is not a regular file.
var errNotRecord = errors.New("a kept agent's file must be a regular file")

func (a agents) exists() bool {
	_, err := os.Lstat(a.dir)
	return err == nil
}

func (a agents) lock() (func(), error) {
	return fsutil.Lock(a.dir + ".lock")
}

func (a agents) path(key string) string { return filepath.Join(a.dir, key+".json") }

// get reads the agent kept under key; nil when there is none.
func (a agents) get(key string) (*agentRecord, error) {
	b, err := fsutil.ReadRegular(a.path(key), maxRecord, errNotRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rec agentRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", a.path(key), err)
	}
	return &rec, nil
}

func (a agents) put(key string, rec *agentRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(a.path(key), append(b, '\n'), 0o644)
}

func (a agents) remove(key string) error {
	if err := os.Remove(a.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// keptAgent is a kept agent and its key.
type keptAgent struct {
	key string
	rec *agentRecord
}

// all is every kept agent, in the order of their keys. A file that does
// not read as one is skipped: it is nobody's.
func (a agents) all() ([]keptAgent, error) {
	entries, err := os.ReadDir(a.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []keptAgent
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || pipeline.CheckName("key", key) != nil {
			continue
		}
		rec, err := a.get(key)
		if err != nil || rec == nil {
			continue
		}
		out = append(out, keptAgent{key, rec})
	}
	return out, nil
}
