// Package verifycommits runs a fast gate at every commit of a stack and
// remembers each result by what decides it: the commit's tree, the gate
// command and a toolchain fingerprint. Results are notes on the trees in
// NotesRef (shareable, written with a compare-and-swap, so concurrent
// writers lose nothing) and, for lookups that must cost no git process, a
// local index under the git dir that is rebuilt from the notes on demand.
// A reworded or reordered commit keeps its tree, and so its result.
package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/fsutil"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/trust"
)

// TrackedFile is the gates file a repository may carry; it names commands,
// so it is used only in the content `git crucible trust` recorded.
const TrackedFile = ".crucible/gates.toml"

// maxConfig bounds the gates file: anything larger is not one.
const maxConfig = 1 << 20

// Gate is the command run at each commit.
type Gate struct {
	Name      string // "fast-gate", "verify" (no-fast-gate), a --gate name, or "exec"
	Command   string // run with sh -c at the top of the commit's work tree
	Source    string // where it was found, for messages
	Toolchain string // a command whose output fingerprints the toolchain; "" for none
}

// Request is what the command line asks for.
type Request struct {
	Exec string // --exec: the user's own command
	Name string // --gate NAME
	// Verify returns the project's full verify (test) command, which
	// no-fast-gate runs; it is asked only then.
	Verify func() (string, error)
}

// fileConfig is a gates.toml; any other key is an error.
type fileConfig struct {
	FastGate   *string           `toml:"fast-gate"`
	NoFastGate bool              `toml:"no-fast-gate"`
	Reason     string            `toml:"reason"`
	Toolchain  *string           `toml:"toolchain"`
	Gates      map[string]string `toml:"gates"`
}

// config is one source's gate settings.
type config struct {
	source string
	fileConfig
}

// Resolve finds the gate to run: --exec; else the --gate NAME from git
// config (crucible.gate.<name>) or the tracked file's [gates]; else the
// default fast gate from git config (crucible.fastGate, or
// crucible.noFastGate holding the reason to run the full verify command)
// or the tracked file (fast-gate, or no-fast-gate with a reason). Git
// config wins over the tracked file, which is read only when needed and
// only when trusted. Stubs are refused; no gate at all is an error, never
// a silent pass.
func Resolve(ctx context.Context, repo *gitext.Repo, req Request) (Gate, error) {
	local, err := gitConfig(ctx, repo)
	if err != nil {
		return Gate{}, err
	}
	var tracked *config
	needTracked := func() (*config, error) {
		if tracked == nil {
			c, err := loadTracked(repo)
			if err != nil {
				return nil, err
			}
			tracked = c
		}
		return tracked, nil
	}
	g, err := pick(req, local, needTracked)
	if err != nil {
		return Gate{}, err
	}
	if g.Toolchain == "" {
		g.Toolchain = deref(local.Toolchain)
	}
	if g.Toolchain == "" && g.Source == TrackedFile {
		g.Toolchain = deref(tracked.Toolchain)
	}
	if err := fastgate.CheckStub(g.Command); err != nil {
		return Gate{}, &outcome.Refused{Err: fmt.Errorf("%s (from %s): %w", g.Name, g.Source, err)}
	}
	return g, nil
}

func pick(req Request, local config, tracked func() (*config, error)) (Gate, error) {
	if req.Exec != "" {
		return Gate{Name: "exec", Command: req.Exec, Source: "--exec"}, nil
	}
	if req.Name != "" {
		if cmd, ok := local.Gates[req.Name]; ok {
			return Gate{Name: req.Name, Command: cmd, Source: local.source}, nil
		}
		t, err := tracked()
		if err != nil {
			return Gate{}, err
		}
		if cmd, ok := t.Gates[req.Name]; ok {
			return Gate{Name: req.Name, Command: cmd, Source: t.source}, nil
		}
		return Gate{}, outcome.WithHints(fmt.Errorf("no gate named %q", req.Name),
			"name it: git config crucible.gate."+req.Name+" '<command>', or under [gates] in "+TrackedFile)
	}
	if g, ok, err := local.fastGate(req.Verify); ok || err != nil {
		return g, err
	}
	t, err := tracked()
	if err != nil {
		return Gate{}, err
	}
	if g, ok, err := t.fastGate(req.Verify); ok || err != nil {
		return g, err
	}
	return Gate{}, outcome.WithHints(errors.New("no fast gate: nothing says what to run at each commit"),
		"set one: git config crucible.fastGate '<command>' (or fast-gate in "+TrackedFile+"),",
		"or run the full verify command at each commit: git config crucible.noFastGate '<reason>',",
		"or pass --exec '<command>'")
}

// fastGate is c's default gate, and whether c names one.
func (c config) fastGate(verifyCommand func() (string, error)) (Gate, bool, error) {
	verify := ""
	if c.NoFastGate && c.FastGate == nil && strings.TrimSpace(c.Reason) != "" && verifyCommand != nil {
		v, err := verifyCommand()
		if err != nil {
			return Gate{}, true, err
		}
		verify = v
	}
	switch {
	case c.FastGate != nil && c.NoFastGate:
		return Gate{}, true, fmt.Errorf("%s: both a fast gate and no-fast-gate: choose one", c.source)
	case c.FastGate != nil:
		return Gate{Name: "fast-gate", Command: *c.FastGate, Source: c.source}, true, nil
	case !c.NoFastGate:
		return Gate{}, false, nil
	case strings.TrimSpace(c.Reason) == "":
		return Gate{}, true, &outcome.Refused{Err: fmt.Errorf("%s: no-fast-gate needs a reason", c.source)}
	case strings.TrimSpace(verify) == "":
		return Gate{}, true, outcome.WithHints(fmt.Errorf("%s: no-fast-gate runs the full verify command, and there is none", c.source),
			"set the project's test command: git config crucible.test '<command>'")
	}
	return Gate{Name: "verify", Command: verify, Source: c.source + " (no-fast-gate: " + c.Reason + ")"}, true, nil
}

// gitConfig reads crucible.fastGate, crucible.noFastGate (the reason),
// crucible.gateToolchain and crucible.gate.<name>.
func gitConfig(ctx context.Context, repo *gitext.Repo) (config, error) {
	if !repo.ConfigMayMention("gate") { // every key here names a gate
		return config{source: "git config"}, nil
	}
	entries, err := repo.ConfigEntries(ctx, `^crucible\.(fastgate|nofastgate|gatetoolchain|gate\..+)$`)
	if err != nil {
		return config{}, err
	}
	c := config{source: "git config"}
	for _, e := range entries {
		v := e.Value
		switch key := strings.ToLower(e.Key); {
		case key == "crucible.fastgate":
			c.FastGate = &v
			c.source = "git config crucible.fastGate"
		case key == "crucible.nofastgate":
			c.NoFastGate, c.Reason = true, v
			c.source = "git config crucible.noFastGate"
		case key == "crucible.gatetoolchain":
			c.Toolchain = &v
		default:
			if c.Gates == nil {
				c.Gates = map[string]string{}
			}
			c.Gates[e.Key[len("crucible.gate."):]] = v
		}
	}
	if c.FastGate != nil && c.NoFastGate {
		c.source = "git config"
	}
	return c, nil
}

// errNotRegular refuses a gates file that is a link, a FIFO or a device.
var errNotRegular = errors.New("not read")

// loadTracked reads the tracked gates file when it is trusted; an absent
// file is an empty one.
func loadTracked(repo *gitext.Repo) (*config, error) {
	c := &config{source: TrackedFile}
	if repo.WorkTree == "" {
		return c, nil
	}
	data, err := fsutil.ReadRegular(filepath.Join(repo.WorkTree, filepath.FromSlash(TrackedFile)), maxConfig, errNotRegular)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, nil
	case errors.Is(err, errNotRegular):
		return nil, &outcome.Refused{Err: err}
	case err != nil:
		return nil, err
	}
	if err := trust.Check(repo, TrackedFile, data); err != nil {
		return nil, outcome.WithHints(err, "review it, then run 'git crucible trust "+TrackedFile+"'")
	}
	md, err := toml.Decode(string(data), &c.fileConfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TrackedFile, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return nil, fmt.Errorf("%s: unknown key %q", TrackedFile, undec[0].String())
	}
	return c, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
