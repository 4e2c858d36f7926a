package manifest

import (
	"strconv"
	"strings"
)

// fieldsOf reads a mapping's keys through readers, refusing keys it does
// not know: a misspelt depends-on must not silently drop an edge.
func fieldsOf(n *node, what string, readers map[string]func(*node) error) error {
	if n.kind != mapNode {
		return errorf(n.line, "%s: want a mapping, found %s", what, n.describe())
	}
	for _, p := range n.keys {
		read, ok := readers[p.key]
		if !ok {
			return errorf(p.line, "%s: unknown key %q", what, clip(p.key))
		}
		if p.val.line == 0 {
			p.val.line = p.line
		}
		if err := read(p.val); err != nil {
			return err
		}
	}
	return nil
}

// str reads text; nothing (YAML's null, an empty value) is "".
func str(key string, p *string) func(*node) error {
	return func(n *node) error {
		switch {
		case n.kind == scalarNode && n.tag == "null":
			*p = ""
		case n.kind == scalarNode:
			*p = n.text
		default:
			return errorf(n.line, "%s: want text, found %s", key, n.describe())
		}
		return nil
	}
}

func oneOf(key string, p *string, allowed ...string) func(*node) error {
	return func(n *node) error {
		if err := str(key, p)(n); err != nil {
			return err
		}
		for _, a := range allowed {
			if *p == a {
				return nil
			}
		}
		return errorf(n.line, "%s: %q is not one of %s", key, clip(*p), strings.Join(allowed, ", "))
	}
}

func flag(key string, p *bool) func(*node) error {
	return func(n *node) error {
		if n.kind != scalarNode || n.tag != "bool" {
			return errorf(n.line, "%s: want true or false, found %s", key, n.describe())
		}
		*p = n.text == "true"
		return nil
	}
}

func number(key string, p *int, least int) func(*node) error {
	return func(n *node) error {
		v, err := strconv.Atoi(n.text)
		if n.kind != scalarNode || n.tag != "int" || err != nil || v < least {
			return errorf(n.line, "%s: want a whole number from %d, found %s", key, least, n.describe())
		}
		*p = v
		return nil
	}
}

// list reads a list, calling item for each element.
func list(key string, item func(*node) error) func(*node) error {
	return func(n *node) error {
		if n.tag == "null" {
			return nil
		}
		if n.kind != listNode {
			return errorf(n.line, "%s: want a list, found %s", key, n.describe())
		}
		for _, it := range n.items {
			if it.line == 0 {
				it.line = n.line
			}
			if err := item(it); err != nil {
				return err
			}
		}
		return nil
	}
}

// strs reads a list of text, and the line of each item into lines when
// it is not nil.
func strs(key string, p *[]string, lines *[]int) func(*node) error {
	*p = nil
	return list(key, func(n *node) error {
		var s string
		if err := str(key, &s)(n); err != nil {
			return err
		}
		*p = append(*p, s)
		if lines != nil {
			*lines = append(*lines, n.line)
		}
		return nil
	})
}

func decodeManifest(root *node) (*Manifest, error) {
	m := &Manifest{
		Status:                  RunPending,
		MaxParallel:             5,
		Critique:                Critique{Enabled: true, Agent: "critique"},
		Commits:                 Commits{Strategy: "per-task", MessageSource: "objective"},
		UnexpectedModifications: "ask",
		DeviationHandling:       DeviationHandling{Threshold: "moderate", AutoFix: true, EscalateTo: "user"},
	}
	var status string
	sawTasks := false
	err := fieldsOf(root, "manifest", map[string]func(*node) error{
		"goal":         str("goal", &m.Goal),
		"status":       oneOf("status", &status, "pending", "in-progress", "completed", "failed", "escalated"),
		"max-parallel": number("max-parallel", &m.MaxParallel, 1),
		"created":      func(n *node) error { m.Created = n.text; return nil },
		"verify":       m.Verify.read,
		"validation": func(n *node) error {
			m.lines.validation = n.line
			return m.Validation.read(n)
		},
		"critique": m.Critique.reader("critique"),
		"commits": func(n *node) error {
			c := &m.Commits
			return fieldsOf(n, "commits", map[string]func(*node) error{
				"strategy":       oneOf("commits.strategy", &c.Strategy, "per-task", "single", "grouped"),
				"approval":       oneOf("commits.approval", &c.Approval, "ask-once", "ask-each", "auto"),
				"message-source": oneOf("commits.message-source", &c.MessageSource, "objective", "notes"),
			})
		},
		"level-boundaries": func(n *node) error { return m.readBoundaries(n) },
		"backup-branch":    str("backup-branch", &m.BackupBranch),
		"fix-loop":         m.FixLoop.read,
		"results": func(n *node) error {
			return fieldsOf(n, "results", map[string]func(*node) error{
				"commits": list("results.commits", func(n *node) error {
					var c ResultCommit
					err := fieldsOf(n, "results.commits", map[string]func(*node) error{
						"sha":     str("sha", &c.SHA),
						"message": str("message", &c.Message),
						"files":   strs("files", &c.Files, nil),
						"tasks":   strs("tasks", &c.Tasks, nil),
					})
					m.Results = append(m.Results, c)
					return err
				}),
			})
		},
		"unexpected-modifications": oneOf("unexpected-modifications", &m.UnexpectedModifications, "ask", "accept"),
		"deviation-handling": func(n *node) error {
			d := &m.DeviationHandling
			return fieldsOf(n, "deviation-handling", map[string]func(*node) error{
				"threshold":   oneOf("deviation-handling.threshold", &d.Threshold, "minor", "moderate", "major"),
				"auto-fix":    flag("deviation-handling.auto-fix", &d.AutoFix),
				"escalate-to": oneOf("deviation-handling.escalate-to", &d.EscalateTo, "user", "greybeard"),
			})
		},
		"tasks": func(n *node) error {
			sawTasks = true
			return list("tasks", func(n *node) error {
				t, lines, err := decodeTask(n)
				if err == nil {
					m.Tasks = append(m.Tasks, t)
					m.lines.tasks = append(m.lines.tasks, lines)
				}
				return err
			})(n)
		},
	})
	if err != nil {
		return nil, err
	}
	if !sawTasks || len(m.Tasks) == 0 {
		return nil, errorf(root.line, "the manifest has no tasks")
	}
	if status != "" {
		m.Status = RunStatus(status)
	}
	return m, nil
}

func (v *Verify) read(n *node) error {
	return fieldsOf(n, "verify", map[string]func(*node) error{
		"workdir": str("verify.workdir", &v.Workdir),
		"build":   str("verify.build", &v.Build),
		"test":    str("verify.test", &v.Test),
		"lint":    str("verify.lint", &v.Lint),
		"custom": list("verify.custom", func(n *node) error {
			var c NamedCommand
			err := fieldsOf(n, "verify.custom", map[string]func(*node) error{
				"name":    str("name", &c.Name),
				"command": str("command", &c.Command),
			})
			if err == nil && (c.Name == "" || c.Command == "") {
				err = errorf(n.line, "verify.custom: each command needs a name and a command")
			}
			v.Custom = append(v.Custom, c)
			return err
		}),
	})
}

func (v *Validation) read(n *node) error {
	return fieldsOf(n, "validation", map[string]func(*node) error{
		"fast-gate":    str("validation.fast-gate", &v.FastGate),
		"no-fast-gate": flag("validation.no-fast-gate", &v.NoFastGate),
		"reason":       str("validation.reason", &v.Reason),
	})
}

func (c *Critique) reader(what string) func(*node) error {
	return func(n *node) error {
		return fieldsOf(n, what, map[string]func(*node) error{
			"enabled": flag(what+".enabled", &c.Enabled),
			"agent":   str(what+".agent", &c.Agent),
			"prompt":  str(what+".prompt", &c.Prompt),
		})
	}
}

func (f *FixLoop) read(n *node) error {
	return fieldsOf(n, "fix-loop", map[string]func(*node) error{
		"in-progress":      flag("fix-loop.in-progress", &f.InProgress),
		"iteration":        number("fix-loop.iteration", &f.Iteration, 0),
		"rebase-base":      str("fix-loop.rebase-base", &f.RebaseBase),
		"affected-commits": strs("fix-loop.affected-commits", &f.AffectedCommits, nil),
	})
}

func (m *Manifest) readBoundaries(n *node) error {
	if n.tag == "null" {
		return nil
	}
	if n.kind != mapNode {
		return errorf(n.line, "level-boundaries: want a mapping of level to commit, found %s", n.describe())
	}
	m.LevelBoundaries = map[int]string{}
	for _, p := range n.keys {
		level, err := strconv.Atoi(p.key)
		if err != nil || level < 1 {
			return errorf(p.line, "level-boundaries: %q is not a level number", clip(p.key))
		}
		var sha string
		if p.val.line == 0 {
			p.val.line = p.line
		}
		if err := str("level-boundaries", &sha)(p.val); err != nil {
			return err
		}
		m.LevelBoundaries[level] = sha
	}
	return nil
}

// taskLines keeps where a task's lists' items are, for validation errors.
type taskLines struct {
	dependsOn, receives []int
	files               []int
	receivesGiven       bool
}

func decodeTask(n *node) (Task, taskLines, error) {
	t := Task{Line: n.line, Status: Pending}
	var lines taskLines
	var status string
	err := fieldsOf(n, "task", map[string]func(*node) error{
		"id":         str("id", &t.ID),
		"type":       oneOf("type", &t.Type, "feature", "bugfix"),
		"agent":      str("agent", &t.Agent),
		"depends-on": strs("depends-on", &t.DependsOn, &lines.dependsOn),
		"receives": func(n *node) error {
			lines.receivesGiven = true
			return strs("receives", &t.Receives, &lines.receives)(n)
		},
		"status":        oneOf("status", &status, "pending", "dispatched", "committed", "completed", "failed", "fixing"),
		"commit-sha":    str("commit-sha", &t.CommitSHA),
		"fixing-source": oneOf("fixing-source", &t.FixingSource, "", "critique", "verification"),
		"critique": func(n *node) error {
			t.Critique = &Critique{Enabled: true, Agent: "critique"}
			return t.Critique.reader("critique")(n)
		},
		"validate-fix": func(n *node) error {
			return fieldsOf(n, "validate-fix", map[string]func(*node) error{
				"enabled":      flag("validate-fix.enabled", &t.ValidateFix.Enabled),
				"test-command": str("validate-fix.test-command", &t.ValidateFix.TestCommand),
			})
		},
		"commit-group": str("commit-group", &t.CommitGroup),
		"files":        strs("files", &t.Files, &lines.files),
	})
	if err != nil {
		return Task{}, taskLines{}, err
	}
	if status != "" {
		t.Status = TaskStatus(status)
	}
	if !lines.receivesGiven {
		t.Receives = append([]string(nil), t.DependsOn...)
		lines.receives = append([]int(nil), lines.dependsOn...)
	}
	return t, lines, nil
}
