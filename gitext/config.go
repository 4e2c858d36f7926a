package gitext

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// ConfigEntry is one value of a configuration key and where git read it.
type ConfigEntry struct {
	Key   string `json:"key"`   // as git prints it: section and name lower-cased
	Value string `json:"value"` // "" for a key given without "=", and for "key ="
	// NoValue marks a key given without "=": true as a boolean, where
	// "key =" is false.
	NoValue bool   `json:"no_value,omitempty"`
	Scope   string `json:"scope"`  // system, global, local, worktree or command
	Origin  string `json:"origin"` // as git shows it: file:<path>, command line:, ...
}

// ConfigEntries returns the values of the keys that match pattern (a
// regular expression, as for git config --get-regexp) in the order git
// reads them, so that for a single-valued key the last one wins, each with
// its scope and origin.
func (r *Repo) ConfigEntries(ctx context.Context, pattern string) ([]ConfigEntry, error) {
	return r.ConfigEntriesIn(ctx, ConfigAll, pattern)
}

// ConfigScope is the configuration a read looks in, or a write goes to.
type ConfigScope string

// The configuration scopes.
const (
	ConfigAll    ConfigScope = ""         // every file git reads, for reads
	ConfigLocal  ConfigScope = "--local"  // the repository's own file
	ConfigGlobal ConfigScope = "--global" // the user's
)

// ConfigEntriesIn is ConfigEntries of scope's file alone.
func (r *Repo) ConfigEntriesIn(ctx context.Context, scope ConfigScope, pattern string) ([]ConfigEntry, error) {
	args := []string{"config", "-z", "--show-origin", "--show-scope"}
	if scope != ConfigAll {
		args = append(args, string(scope))
	}
	out, err := runWith(ctx, r, Exec{Dir: r.top()}, nil, append(args, "--get-regexp", pattern)...)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 && len(out) == 0 {
		return nil, nil // nothing matched
	}
	if err != nil {
		return nil, err
	}
	return ParseConfigZ(out)
}

// ParseConfigZ reads the output of git config -z --show-scope --show-origin
// --get-regexp: per value, "scope NUL origin NUL key [LF value] NUL".
func ParseConfigZ(out []byte) ([]ConfigEntry, error) {
	fields := strings.Split(string(out), "\x00")
	if fields[len(fields)-1] != "" {
		return nil, fmt.Errorf("git config output does not end with NUL: %q", out)
	}
	fields = fields[:len(fields)-1]
	if len(fields)%3 != 0 {
		return nil, fmt.Errorf("git config output has %d fields, not scope, origin and key for each value: %q", len(fields), out)
	}
	var entries []ConfigEntry
	for i := 0; i < len(fields); i += 3 {
		key, value, hasValue := strings.Cut(fields[i+2], "\n")
		entries = append(entries, ConfigEntry{Key: key, Value: value, NoValue: !hasValue, Scope: fields[i], Origin: fields[i+1]})
	}
	return entries, nil
}

// HooksDir is the directory git runs this repository's hooks from, found
// as git finds it: core.hooksPath when set (a relative one is relative to
// the top of the work tree), else the common dir's hooks directory, which
// linked worktrees share.
func (r *Repo) HooksDir(ctx context.Context) (string, error) {
	out, err := runWith(ctx, r, Exec{Dir: r.top()}, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// top is the directory git runs hooks in and resolves the repository's
// relative paths from: the top of the work tree, or the git dir when there
// is none.
func (r *Repo) top() string {
	if r.WorkTree != "" {
		return r.WorkTree
	}
	return r.GitDir
}

// ConfigMayMention reports whether any config git would read here might
// set one of keys (lower-case names, e.g. "commentchar"): a cheap, in-process
// look at the config files and GIT_CONFIG_* variables, so that a hot path
// can skip a `git config` process when nothing could be set. Anything it
// cannot rule out — an include, a file it cannot read — counts as a mention.
func (r *Repo) ConfigMayMention(keys ...string) bool {
	words := append([]string{"include"}, keys...)
	if configCommandLine(words) {
		return true
	}
	for _, f := range r.configFiles() {
		b, err := fsutil.ReadNoPoll(f.path)
		if errors.Is(err, os.ErrNotExist) || f.path == "/dev/null" {
			continue
		}
		if err != nil || mentionsAny(string(b), words) {
			return true
		}
	}
	return false
}

// ConfigValue returns the value of key that git uses (the last one), read
// as typ ("bool", "int", "path", ... as for git config --type; "" for the
// raw string), and whether key is set. A value git cannot read as typ is an
// error in git's words, as any git command would give.
func (r *Repo) ConfigValue(ctx context.Context, typ, key string) (string, bool, error) {
	args := []string{"config", "-z"}
	if typ != "" {
		args = append(args, "--type="+typ)
	}
	out, err := runWith(ctx, r, Exec{Dir: r.top()}, nil, append(args, "--get", key)...)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 && len(out) == 0 {
		return "", false, nil // unset
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\x00"), true, nil
}

// ConfigBool is key as git reads a boolean (true, yes, on, 1, ...), def
// when unset.
func (r *Repo) ConfigBool(ctx context.Context, key string, def bool) (bool, error) {
	v, ok, err := r.ConfigValue(ctx, "bool", key)
	if err != nil || !ok {
		return def, err
	}
	return v == "true", nil
}

// ConfigInt is key as git reads an integer (with a k, m or g unit), def
// when unset.
func (r *Repo) ConfigInt(ctx context.Context, key string, def int64) (int64, error) {
	v, ok, err := r.ConfigValue(ctx, "int", key)
	if err != nil || !ok {
		return def, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// ConfigFloat is key read as a decimal number (git config has no such
// type: 2.50, 5, 1e3), and whether key is set. A value that is not one is
// an error in git's words for a bad number.
func (r *Repo) ConfigFloat(ctx context.Context, key string) (float64, bool, error) {
	v, ok, err := r.ConfigValue(ctx, "", key)
	if err != nil || !ok {
		return 0, false, err
	}
	f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if perr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, true, fmt.Errorf("bad numeric config value '%s' for '%s': not a decimal number", v, key)
	}
	return f, true, nil
}

// ConfigPath is key as git reads a path ("~/" expanded), "" when unset.
func (r *Repo) ConfigPath(ctx context.Context, key string) (string, error) {
	v, _, err := r.ConfigValue(ctx, "path", key)
	return v, err
}

// ConfigSet sets key to value in scope's file, in place of its one value
// there (git config; a key with several values there is an error).
func (r *Repo) ConfigSet(ctx context.Context, scope ConfigScope, key, value string) error {
	return r.configWrite(ctx, scope, nil, key, value)
}

// ConfigAdd adds value to key's values in scope's file.
func (r *Repo) ConfigAdd(ctx context.Context, scope ConfigScope, key, value string) error {
	return r.configWrite(ctx, scope, []string{"--add"}, key, value)
}

// ConfigUnsetAll removes every value of key from scope's file; none there
// is no error.
func (r *Repo) ConfigUnsetAll(ctx context.Context, scope ConfigScope, key string) error {
	err := r.configWrite(ctx, scope, []string{"--unset-all"}, key)
	if IsExit(err, 5) { // git's "nothing to unset"
		return nil
	}
	return err
}

// configWrite runs git config with scope and opts on key (and value).
func (r *Repo) configWrite(ctx context.Context, scope ConfigScope, opts []string, kv ...string) error {
	if scope == ConfigAll {
		return errors.New("git config: a write needs a scope")
	}
	args := append(append([]string{"config", string(scope)}, opts...), "--end-of-options")
	_, err := run(ctx, r, nil, append(args, kv...)...)
	return err
}
