package taskdag

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/taskdag/manifest"
)

// TaskRole plays every task agent of a run; the tasks' own agent types
// (general, intern, explore) are crucible's subagent types, which an agent
// configuration maps to a role if it wants them apart.
const TaskRole = "implementer"

// TaskAgent is the agent that plays TaskRole, refused when a person plays
// it: a task run asks no one.
func TaskAgent(agents *agent.Config, workTree string) (agent.Agent, error) {
	a, err := agents.Ready(TaskRole, workTree)
	if err != nil {
		return a, err
	}
	if a.Kind == agent.Manual {
		return a, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("role %s is played by the manual agent %q: a task run cannot wait for a person", TaskRole, a.Name)},
			"give the role an agent that runs by itself: git config crucible.role."+TaskRole+" claude (or codex, or one of yours)")
	}
	return a, nil
}

// Agents checks that the agents a run of m needs are ready before it
// starts: TaskAgent's, and the critique's (critique.agent names the role
// its agent plays) when a task of m is critiqued.
func Agents(agents *agent.Config, m *manifest.Manifest, workTree string) error {
	if _, err := TaskAgent(agents, workTree); err != nil {
		return err
	}
	if slices.ContainsFunc(m.Tasks, func(t manifest.Task) bool { return NeedsCritique(m, &t) }) {
		if _, err := agents.Ready(cmp.Or(m.Critique.Agent, "critique"), workTree); err != nil {
			return err
		}
	}
	return nil
}

// Approve is the check that a run, which asks no one, may make manifest
// m's commits (the file name): yes (the user said so), or an approval in
// m that asks no one. hints say how to approve them.
func Approve(m *manifest.Manifest, name string, yes bool, hints ...string) error {
	if a := m.Commits.Approval; yes || a != "ask-once" && a != "ask-each" {
		return nil
	}
	return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s: commits.approval is %s, and a run asks no one: its commits need approving up front", name, m.Commits.Approval)}, hints...)
}

// MaxTasksKey is the git config key of the most tasks a run takes.
const MaxTasksKey = "crucible.maxTasks"

// defaultMaxTasks is the most tasks a run takes when nothing says otherwise.
const defaultMaxTasks = 50

// MaxTasks is the most tasks a run takes and where that was set: flag
// (--max-tasks) when the user gave it, else MaxTasksKey, else 50; 0 is no
// cap.
func MaxTasks(ctx context.Context, repo *gitext.Repo, flag *int64) (int64, string, error) {
	if flag != nil {
		return *flag, "--max-tasks", nil
	}
	limit, err := repo.ConfigInt(ctx, MaxTasksKey, defaultMaxTasks)
	switch {
	case err != nil:
		return 0, "", err
	case limit < 0:
		return 0, "", outcome.Usagef("%s %d: want 0 (no cap) or more", MaxTasksKey, limit)
	}
	return limit, MaxTasksKey, nil
}

// TooMany is the refusal of manifest m (the file name, quoted for a shell
// in the hint) when it has more tasks than limit allows (from says who set
// it); nil when it has not.
func TooMany(m *manifest.Manifest, name, quoted string, limit int64, from string) error {
	if limit == 0 || int64(len(m.Tasks)) <= limit {
		return nil
	}
	return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s: %d tasks, more than the cap of %d (%s): a run fans out to as many agents", name, len(m.Tasks), limit, from)},
		"split it into smaller runs, or allow them: git crucible run --max-tasks "+strconv.Itoa(len(m.Tasks))+" "+quoted)
}
