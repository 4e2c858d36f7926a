package agent

import (
	"errors"
	"fmt"
	"github.com/git-crucible/git-crucible/internal/lazy"
	"github.com/git-crucible/git-crucible/internal/tomlpos"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ConfigError is a configuration that cannot be used, located in its
// file: line 0 when the line is not known (git config gives none).
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// fileConfig is an agents.toml: every key has a field, so any other key
// is one the user misspelled.
type fileConfig struct {
	Agents  map[string]fileAgent `toml:"agents"`
	Roles   map[string]string    `toml:"roles"`
	Project struct {
		Test *string `toml:"test"`
	} `toml:"project"`
}

type fileAgent struct {
	Kind    *string           `toml:"kind"`
	Command []string          `toml:"command"`
	Args    []string          `toml:"args"`
	Timeout *string           `toml:"timeout"`
	Model   *string           `toml:"model"`
	Env     map[string]string `toml:"env"`
}

// Parse reads an agents.toml named file (for errors and sources).
func Parse(file string, data []byte) (layer, error) {
	var fc fileConfig
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		return layer{}, tomlError(file, err)
	}
	lines := tomlpos.Lines(data)
	bad := func(key toml.Key, format string, args ...any) error {
		return &ConfigError{File: file, Line: tomlpos.LineOf(lines, strings.Join(key, ".")), Msg: key.String() + ": " + fmt.Sprintf(format, args...)}
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return layer{}, bad(undecoded[0], "unknown key")
	}
	l := layer{agents: map[string]Agent{}, roles: map[string]string{}, test: fc.Project.Test}
	for _, name := range slices.Sorted(maps.Keys(fc.Agents)) {
		a, key, msg := fc.Agents[name].agent(name, file)
		if msg != "" {
			return layer{}, bad(append(toml.Key{"agents", name}, key...), "%s", msg)
		}
		l.agents[name] = a
	}
	for _, role := range slices.Sorted(maps.Keys(fc.Roles)) {
		if msg := checkRole(role, fc.Roles[role]); msg != "" {
			return layer{}, bad(toml.Key{"roles", role}, "%s", msg)
		}
		l.roles[role] = fc.Roles[role]
	}
	if l.test != nil && strings.TrimSpace(*l.test) == "" {
		return layer{}, bad(toml.Key{"project", "test"}, "is empty")
	}
	return l, nil
}

// agent validates one [agents.NAME] table; a problem is named by the key
// it is under (nil: the table) and a message.
func (fa fileAgent) agent(name, source string) (Agent, []string, string) {
	if msg := checkName("agent name", name); msg != "" {
		return Agent{}, nil, msg
	}
	if fa.Kind == nil {
		return Agent{}, nil, `has no kind (claude, codex, command or manual)`
	}
	a := Agent{Name: name, Kind: Kind(*fa.Kind), Command: fa.Command, Args: fa.Args, Timeout: DefaultTimeout, Env: fa.Env, Source: source}
	if !slices.Contains(kinds, a.Kind) {
		return Agent{}, []string{"kind"}, fmt.Sprintf("unknown kind %q: want claude, codex, command or manual", *fa.Kind)
	}
	if fa.Model != nil {
		a.Model = *fa.Model
	}
	if fa.Timeout != nil {
		d, err := time.ParseDuration(*fa.Timeout)
		if err != nil || d <= 0 {
			return Agent{}, []string{"timeout"}, fmt.Sprintf("bad timeout %q: want a positive duration such as \"10m\" or \"1h30m\"", *fa.Timeout)
		}
		a.Timeout = d
	}
	key, msg := a.check(fa.Model != nil, fa.Timeout != nil)
	return a, key, msg
}

// check applies what every source must respect, whatever its syntax.
func (a Agent) check(hasModel, hasTimeout bool) ([]string, string) {
	switch {
	case a.Kind == Command && len(a.Command) == 0:
		return nil, "a command agent needs command = [\"program\", \"arg\", ...]"
	case a.Kind == Command && len(a.Args) > 0:
		return []string{"args"}, "a command agent takes its arguments in command"
	case a.Kind == Command && hasModel:
		return []string{"model"}, "a command agent takes no model: pass it in command"
	case a.Kind == Manual && (len(a.Command) > 0 || len(a.Args) > 0 || hasModel || hasTimeout || len(a.Env) > 0):
		return nil, "a manual agent runs nothing: it takes only kind"
	case hasModel && strings.TrimSpace(a.Model) == "":
		return []string{"model"}, "is empty"
	}
	for i, arg := range slices.Concat(a.Command, a.Args) {
		if arg == "" || strings.ContainsRune(arg, 0) {
			key := "command"
			if i >= len(a.Command) {
				key = "args"
			}
			return []string{key}, "has an empty argument or one with a NUL byte"
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		switch {
		case !envName.Get().MatchString(k):
			return []string{"env"}, fmt.Sprintf("%q is not an environment variable name", k)
		case strings.HasPrefix(k, "CRUCIBLE_"):
			return []string{"env"}, fmt.Sprintf("%s is set by git-crucible for each dispatch", k)
		case strings.ContainsRune(a.Env[k], 0):
			return []string{"env"}, fmt.Sprintf("%s has a NUL byte", k)
		}
	}
	return nil, ""
}

var (
	envName  = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}
	wordName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) }}
)

func checkName(what, name string) string {
	if !wordName.Get().MatchString(name) {
		return fmt.Sprintf("%s %q: want letters, digits, '.', '_' and '-'", what, name)
	}
	return ""
}

func checkRole(role, agent string) string {
	if msg := checkName("role", role); msg != "" {
		return msg
	}
	return checkName("agent name", agent)
}

// tomlError locates the decoder's complaint: a syntax error carries its
// position, a type mismatch names its line in its text.
func tomlError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &ConfigError{File: file, Line: pe.Position.Line, Msg: pe.Message}
	}
	if m := decodeErr.Get().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ConfigError{File: file, Line: line, Msg: m[2] + ": " + m[3]}
	}
	return &ConfigError{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

var decodeErr = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^toml: line (\d+) \(last key "(.*)"\): (.*)$`) }}
