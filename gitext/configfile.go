package gitext

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// configFile is a file git may read its configuration from; sure says
// whether it surely does: where the system file is depends on how git was
// built, and config.worktree counts only under extensions.worktreeConfig.
type configFile struct {
	path string
	sure bool
}

// configFiles are the files git reads its configuration from here, in its
// order (a later value wins), and the ones it might read.
func (r *Repo) configFiles() []configFile {
	var files []configFile
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if s := os.Getenv("GIT_CONFIG_SYSTEM"); s != "" {
			files = append(files, configFile{s, true})
		} else {
			for _, s := range []string{"/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"} {
				files = append(files, configFile{s, false})
			}
			// git's system config lives under its prefix (/usr's is /etc's,
			// listed above); git tells hooks where it is installed.
			if exec := os.Getenv("GIT_EXEC_PATH"); exec != "" {
				files = append(files, configFile{filepath.Join(filepath.Dir(filepath.Dir(exec)), "etc", "gitconfig"), false})
			}
		}
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, configFile{g, true})
	} else {
		home := os.Getenv("HOME")
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, configFile{filepath.Join(xdg, "git", "config"), true})
		}
		if home != "" {
			files = append(files, configFile{filepath.Join(home, ".gitconfig"), true})
		}
	}
	return append(files, configFile{filepath.Join(r.CommonDir, "config"), true},
		configFile{filepath.Join(r.GitDir, "config.worktree"), false})
}

// configCommandLine reports whether the settings git -c passes on to us
// (GIT_CONFIG_PARAMETERS, GIT_CONFIG_KEY_<n>) might mention one of words.
func configCommandLine(words []string) bool {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") || strings.HasPrefix(kv, "GIT_CONFIG_KEY_") {
			if mentionsAny(kv, words) {
				return true
			}
		}
	}
	return false
}

func mentionsAny(text string, words []string) bool {
	text = strings.ToLower(text)
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// configValue is a key's raw value in a config file; noValue marks a key
// given without "=" (true as a boolean).
type configValue struct {
	value   string
	noValue bool
}

// configInProcess returns the values git takes for keys ("section.name",
// lower case, no subsection), the last one set of each, read from the
// config files without starting git; ok is false when it cannot be sure of
// git's answer — an include, a setting through git -c, one of keys'
// sections in a file git might not read, a line it does not read as git
// does — and the caller asks git.
func (r *Repo) configInProcess(keys ...string) (vals map[string]configValue, ok bool) {
	var sections []string
	for _, k := range keys {
		sections = append(sections, k[:strings.IndexByte(k, '.')])
	}
	if configCommandLine(append(sections, "include")) {
		return nil, false
	}
	vals = map[string]configValue{}
	for _, f := range r.configFiles() {
		b, err := fsutil.ReadNoPoll(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false
		}
		if !f.sure {
			if mentionsAny(string(b), append(sections, "include")) {
				return nil, false
			}
			continue
		}
		if !parseConfig(string(b), keys, vals) {
			return nil, false
		}
	}
	return vals, true
}

// parseConfig sets in vals the values text gives keys, in git's config
// syntax. It reports false for what it does not read as git does: an
// include, a line continued with a backslash, a quoted or escaped value of
// one of keys, a line that is not a section, a key or a comment.
func parseConfig(text string, keys []string, vals map[string]configValue) bool {
	if strings.Contains(text, "\\\n") || strings.Contains(text, "\\\r\n") {
		return false
	}
	section, sub := "", false
	for _, line := range strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n") {
		line = strings.TrimLeft(line, " \t\r\v\f")
		if strings.HasPrefix(line, "[") {
			var ok bool
			if section, sub, line, ok = parseSection(line); !ok || section == "include" || section == "includeif" {
				return false
			}
			line = strings.TrimLeft(line, " \t\r\v\f")
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		n := 0
		for n < len(line) && (isAlpha(line[n]) || n > 0 && (line[n] == '-' || line[n] >= '0' && line[n] <= '9')) {
			n++
		}
		name, rest := strings.ToLower(line[:n]), strings.TrimLeft(line[n:], " \t\r\v\f")
		if n == 0 || section == "" || rest != "" && rest[0] != '=' && rest[0] != '#' && rest[0] != ';' {
			return false
		}
		key := section + "." + name
		if sub || !slices.Contains(keys, key) {
			continue
		}
		if rest == "" || rest[0] != '=' {
			vals[key] = configValue{noValue: true}
			continue
		}
		v := rest[1:]
		if strings.ContainsAny(v, "\"\\") {
			return false
		}
		if i := strings.IndexAny(v, "#;"); i >= 0 {
			v = v[:i]
		}
		vals[key] = configValue{value: strings.Trim(v, " \t\r\v\f")}
	}
	return true
}

// parseSection reads a section header at the start of line: its name in
// lower case, whether it names a subsection ([name "sub"], or the old
// [name.sub]), and the rest of the line.
func parseSection(line string) (name string, sub bool, rest string, ok bool) {
	i := 1
	for i < len(line) && (isAlpha(line[i]) || line[i] >= '0' && line[i] <= '9' || line[i] == '-' || line[i] == '.') {
		i++
	}
	name = strings.ToLower(line[1:i])
	if dot := strings.IndexByte(name, '.'); dot >= 0 {
		name, sub = name[:dot], true
	}
	if name == "" {
		return "", false, "", false
	}
	if i < len(line) && line[i] == ']' {
		return name, sub, line[i+1:], true
	}
	if sub || i == len(line) || line[i] != ' ' && line[i] != '\t' {
		return "", false, "", false
	}
	j := i + 1
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	if j == len(line) || line[j] != '"' {
		return "", false, "", false
	}
	for j++; j < len(line) && line[j] != '"'; j++ {
		if line[j] == '\\' {
			j++
		}
	}
	if j+1 >= len(line) || line[j+1] != ']' {
		return "", false, "", false
	}
	return name, true, line[j+2:], true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// gcConfigInProcess reads maintenance.auto and gc.auto (defaults true and
// defaultGCAuto) as git would, without starting git: an append runs
// AutoGC, and a config that merely mentions gc (gc.auto=0 in a global
// config, say) would otherwise cost it a git process. ok is false for
// anything it cannot be sure of; the caller asks git.
func (r *Repo) gcConfigInProcess() (on bool, limit int64, ok bool) {
	vals, ok := r.configInProcess("maintenance.auto", "gc.auto")
	if !ok {
		return false, 0, false
	}
	on, limit = true, defaultGCAuto
	if v, set := vals["maintenance.auto"]; set {
		if on, ok = parseConfigBool(v); !ok {
			return false, 0, false
		}
	}
	if v, set := vals["gc.auto"]; set {
		if limit, ok = parseConfigInt(v); !ok {
			return false, 0, false
		}
	}
	return on, limit, true
}

// gcConfigFromGit is gcConfigInProcess asking git; ok is false when git
// refuses gc.auto, as git gc would.
func (r *Repo) gcConfigFromGit(ctx context.Context) (on bool, limit int64, ok bool) {
	if on, err := r.ConfigBool(ctx, "maintenance.auto", true); err == nil && !on {
		return false, 0, true
	}
	limit, err := r.ConfigInt(ctx, "gc.auto", defaultGCAuto)
	return true, limit, err == nil
}

// parseConfigBool reads v as git reads a boolean; ok is false for what
// git would refuse or this does not read (a number other than 0 and 1).
func parseConfigBool(v configValue) (b, ok bool) {
	if v.noValue {
		return true, true
	}
	switch strings.ToLower(v.value) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// parseConfigInt reads v as git reads an integer, with a k, m or g unit;
// ok is false for what git would refuse or might read otherwise (git takes
// a leading 0 as octal and 0x as hexadecimal).
func parseConfigInt(v configValue) (int64, bool) {
	s, unit := v.value, int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			unit = 1 << 10
		case 'm', 'M':
			unit = 1 << 20
		case 'g', 'G':
			unit = 1 << 30
		}
		if unit != 1 {
			s = s[:len(s)-1]
		}
	}
	digits := strings.TrimPrefix(s, "-")
	if v.noValue || digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt64/unit || n < math.MinInt64/unit {
		return 0, false
	}
	return n * unit, true
}
