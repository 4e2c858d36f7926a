package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/agent"
)

// AgentDir is where a dispatch's agent reads its prompt and writes its
// report: in its working directory, where the real clients let it write
// (never under .git), in a directory of its own that ignores itself, so
// that git status never shows it and nothing commits it. The engine's own
// records of the dispatch stay in its run directory, under the git dir.
type AgentDir struct {
	Dir     string `json:"dir"`     // <Workdir>/.crucible/runs/<pipeline>/<random>
	Workdir string `json:"workdir"` // the agent's working directory
	// InSlot: Workdir is a task run's slot, whose next dispatch makes its
	// directory in the same parents: they stay when it goes.
	InSlot bool `json:"in_slot,omitempty"`
}

// Report is the report's path, which the prompt names.
func (a AgentDir) Report() string { return filepath.Join(a.Dir, reportFile) }

// Prompt is the prompt's path (CRUCIBLE_PROMPT).
func (a AgentDir) Prompt() string { return filepath.Join(a.Dir, promptFile) }

// agentDirFile, in a run directory, names its dispatch's AgentDir, written
// before the agent starts: a successor finds its report by it.
const agentDirFile = "agent-dir.json"

// ignoreAll is the .gitignore that makes git ignore a directory and itself.
const ignoreAll = "# git-crucible: an agent's prompt and report, removed when its dispatch is recorded\n*\n"

// NewAgentDir makes a fresh agent directory in workdir ("" for the
// engine's work tree), for a prompt to name its report before the
// dispatch has a seq: the dispatches of a task run start at once.
func (e *Engine) NewAgentDir(workdir string) (AgentDir, error) {
	if workdir == "" {
		workdir = e.Workdir
	}
	return NewAgentDir(workdir, e.ID)
}

// NewAgentDir makes a fresh agent directory in workdir for owner's agents
// (a pipeline's id).
func NewAgentDir(workdir, owner string) (AgentDir, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return AgentDir{}, err
	}
	a := AgentDir{Dir: filepath.Join(workdir, filepath.FromSlash(agent.RunsDir), owner, hex.EncodeToString(b[:])), Workdir: workdir}
	// Another dispatch's clean-up may remove an empty parent meanwhile.
	var err error
	for range 3 {
		if err = os.MkdirAll(a.Dir, 0o755); err == nil {
			break
		}
	}
	if err != nil {
		return AgentDir{}, err
	}
	if err := os.WriteFile(filepath.Join(a.Dir, ".gitignore"), []byte(ignoreAll), 0o644); err != nil {
		return AgentDir{}, err
	}
	return a, nil
}

// Remove removes the agent directory and the parents it leaves empty,
// up to the working directory.
func (a AgentDir) Remove() error {
	if err := os.RemoveAll(a.Dir); err != nil || a.InSlot {
		return err
	}
	for dir := filepath.Dir(a.Dir); dir != a.Workdir && strings.HasPrefix(dir, a.Workdir+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty: someone else's too
		}
	}
	return nil
}

// agentDirOf reads which agent directory dispatch seq's run directory
// names, refusing one that is not an agent directory of this pipeline's:
// the engine removes it when the dispatch is recorded. ok is false when
// none is named (a run directory of an earlier git-crucible, whose agent
// wrote in the run directory itself).
func (e *Engine) agentDirOf(seq int) (a AgentDir, ok bool, err error) {
	ok, err = readJSON(filepath.Join(e.RunDir(seq), agentDirFile), &a)
	if !ok || err != nil {
		return AgentDir{}, false, err
	}
	want := filepath.Join(a.Workdir, filepath.FromSlash(agent.RunsDir), e.ID)
	if !filepath.IsAbs(a.Dir) || !filepath.IsAbs(a.Workdir) || filepath.Dir(a.Dir) != want || filepath.Clean(a.Dir) != a.Dir {
		return AgentDir{}, false, fmt.Errorf("dispatch %d: %s names %q, not an agent directory of pipeline %s", seq, agentDirFile, a.Dir, e.ID)
	}
	return a, true, nil
}
