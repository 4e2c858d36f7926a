package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/trust"
)

// TrackedFile is the agents file a repository may carry, from the top of
// its work tree.
const TrackedFile = ".crucible/agents.toml"

// maxConfig bounds a configuration file: anything larger is not one.
const maxConfig = 1 << 20

// UserFile is the user's own agents file: $XDG_CONFIG_HOME (or
// ~/.config)/git-crucible/agents.toml; "" when neither is known.
func UserFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := os.Getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "git-crucible", "agents.toml")
}

// RepositoryFile is the repository's untracked agents file, under the
// common git dir so that every worktree of it shares it.
func RepositoryFile(repo *gitext.Repo) string {
	return filepath.Join(repo.CrucibleDir(), "agents.toml")
}

// Load reads and merges every source, lowest precedence first: the
// built-in agents (claude, codex, manual), the tracked .crucible/agents.toml
// when trusted, the user's file, the repository's untracked file, and git
// config (crucible.agent.<name>.*, crucible.role.<role>, crucible.test).
// A file that cannot be read or parsed is an error; a tracked file that is
// not trusted is not, but is kept in Refused.
func Load(ctx context.Context, repo *gitext.Repo) (*Config, error) {
	c := &Config{Agents: builtIn(), Roles: map[string]Binding{}}
	if repo.WorkTree != "" {
		if err := c.loadTracked(repo); err != nil {
			return nil, err
		}
	}
	for _, s := range []Source{{Name: "user", Path: UserFile()}, {Name: "repository", Path: RepositoryFile(repo)}} {
		if s.Path == "" {
			continue
		}
		data, err := readConfig(s.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			s.Status = "absent"
		case err != nil:
			return nil, err
		default:
			l, err := Parse(s.Path, data)
			if err != nil {
				return nil, err
			}
			c.merge(l, s.Path)
			s.Status = "loaded"
		}
		c.Sources = append(c.Sources, s)
	}
	l, found, err := gitConfig(ctx, repo)
	if err != nil {
		return nil, err
	}
	c.merge(l, "git config")
	c.Sources = append(c.Sources, Source{Name: "git config", Status: map[bool]string{true: "loaded", false: "absent"}[found]})
	return c, nil
}

// loadTracked merges the tracked file when its content is trusted.
func (c *Config) loadTracked(repo *gitext.Repo) error {
	s := Source{Name: "tracked", Path: TrackedFile}
	defer func() { c.Sources = append(c.Sources, s) }()
	data, err := readConfig(filepath.Join(repo.WorkTree, filepath.FromSlash(TrackedFile)))
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.Status = "absent"
		return nil
	case errors.Is(err, errNotRegular):
		s.Status = "refused"
		c.Refused = &outcome.Refused{Err: err}
		return nil
	case err != nil:
		return err
	}
	s.Hash = trust.Hash(data)
	if err := trust.Check(repo, TrackedFile, data); err != nil {
		var u *trust.Untrusted
		if !errors.As(err, &u) {
			return err
		}
		s.Status = "refused"
		c.Refused = outcome.WithHints(err, "review it, then run 'git crucible trust "+TrackedFile+"'")
		return nil
	}
	l, err := Parse(TrackedFile, data)
	if err != nil {
		return err
	}
	s.Status = "trusted"
	c.merge(l, TrackedFile)
	return nil
}

// errNotRegular refuses a configuration path that is a symbolic link
// (whose target the user did not choose to trust), a FIFO or a device.
var errNotRegular = errors.New("not read")

// readConfig reads a configuration file: regular, and small.
func readConfig(path string) ([]byte, error) {
	return fsutil.ReadRegular(path, maxConfig, errNotRegular)
}

// gitConfig reads the agents and roles set in git config: one agent from
// all its crucible.agent.<name>.* keys (command, args and env take several
// values, in order, from the last file that sets them), a role from
// crucible.role.<role>, the test command from crucible.test.
func gitConfig(ctx context.Context, repo *gitext.Repo) (layer, bool, error) {
	entries, err := repo.ConfigEntries(ctx, `^crucible\.(agent\.[^.]+|agent\..+\.[^.]+|role\.[^.]+|test)$`)
	if err != nil || len(entries) == 0 {
		return layer{}, false, err
	}
	l := layer{agents: map[string]Agent{}, roles: map[string]string{}}
	type values struct {
		origin string
		list   []string
	}
	agentKeys := map[string]map[string]*values{}
	var names []string
	for _, e := range entries {
		bad := func(format string, args ...any) error {
			return &ConfigError{File: origin(e), Msg: e.Key + ": " + fmt.Sprintf(format, args...)}
		}
		switch {
		case e.Key == "crucible.test":
			if strings.TrimSpace(e.Value) == "" {
				return layer{}, false, bad("is empty")
			}
			l.test = &e.Value
		case strings.HasPrefix(e.Key, "crucible.role."):
			role := strings.TrimPrefix(e.Key, "crucible.role.")
			if msg := checkRole(role, e.Value); msg != "" {
				return layer{}, false, bad("%s", msg)
			}
			l.roles[role] = e.Value
		default:
			rest := strings.TrimPrefix(e.Key, "crucible.agent.")
			i := strings.LastIndexByte(rest, '.')
			if i < 0 {
				return layer{}, false, bad("names no agent: set crucible.agent.<name>.%s", rest)
			}
			name, key := rest[:i], rest[i+1:]
			if agentKeys[name] == nil {
				agentKeys[name] = map[string]*values{}
				names = append(names, name)
			}
			v := agentKeys[name][key]
			if v == nil || v.origin != e.Origin || !slices.Contains([]string{"command", "args", "env"}, key) {
				v = &values{origin: e.Origin}
				agentKeys[name][key] = v
			}
			v.list = append(v.list, e.Value)
		}
	}
	for _, name := range names {
		keys := agentKeys[name]
		source := "git config crucible.agent." + name
		bad := func(key, format string, args ...any) error {
			file := "git config"
			if v := keys[key]; v != nil {
				file = origin(gitext.ConfigEntry{Origin: v.origin})
			}
			return &ConfigError{File: file, Msg: "crucible.agent." + name + "." + key + ": " + fmt.Sprintf(format, args...)}
		}
		one := func(key string) *string {
			if v := keys[key]; v != nil {
				return &v.list[len(v.list)-1]
			}
			return nil
		}
		fa := fileAgent{Kind: one("kind"), Timeout: one("timeout"), Model: one("model")}
		for key := range keys {
			switch key {
			case "kind", "timeout", "model":
			case "command":
				fa.Command = keys[key].list
			case "args":
				fa.Args = keys[key].list
			case "env":
				fa.Env = map[string]string{}
				for _, kv := range keys[key].list {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return layer{}, false, bad(key, "%q is not NAME=VALUE", kv)
					}
					fa.Env[k] = v
				}
			default:
				return layer{}, false, bad(key, "unknown key")
			}
		}
		a, key, msg := fa.agent(name, source)
		if msg != "" {
			k := "kind"
			if len(key) > 0 {
				k = key[0]
			}
			return layer{}, false, bad(k, "%s", msg)
		}
		l.agents[name] = a
	}
	return l, true, nil
}

// origin names where git read a value: its file, or the command line.
func origin(e gitext.ConfigEntry) string {
	if f, ok := strings.CutPrefix(e.Origin, "file:"); ok {
		return f
	}
	if e.Origin == "" {
		return "git config"
	}
	return "git config (" + strings.TrimSuffix(e.Origin, ":") + ")"
}

// Use maps every role of Roles, and the default, to agent name in git
// config: the repository's, or the user's when global. It returns the file
// written. Git config is read last, so the mapping wins over every file.
func Use(ctx context.Context, repo *gitext.Repo, name string, global bool) (string, error) {
	if msg := checkName("agent name", name); msg != "" {
		return "", outcome.Usagef("%s", msg)
	}
	c, err := Load(ctx, repo)
	if err != nil {
		return "", err
	}
	if _, err := c.Agent(name); err != nil {
		return "", err
	}
	scope := gitext.ConfigLocal
	if global {
		scope = gitext.ConfigGlobal
	}
	for _, role := range append([]string{DefaultRole}, Roles...) {
		if err := repo.ConfigSet(ctx, scope, "crucible.role."+role, name); err != nil {
			return "", err
		}
	}
	entries, err := repo.ConfigEntriesIn(ctx, scope, `^crucible\.role\.`+regexp.QuoteMeta(DefaultRole)+`$`)
	if err != nil || len(entries) == 0 {
		return "", err
	}
	return strings.TrimPrefix(entries[len(entries)-1].Origin, "file:"), nil
}
