package gitext

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// defaultGCAuto is git's gc.auto when unset: about how many loose objects
// make git gc --auto pack them.
const defaultGCAuto = 6700

// AutoGC does what git's own commands do after they write objects: it runs
// `git gc --auto`, which packs loose objects when there are too many and,
// by default (gc.autoDetach), does so in the background. Unlike git's
// commands it starts no process while none is due: it takes git's own
// sample first, the loose objects in objects/17 (a 256th of them), against
// gc.auto, read in process when it can. gc.auto=0 or maintenance.auto=false
// turn it off, as for git. It
// reports whether it ran git gc. A gc that fails is for git to report (in
// gc.log) at a later try, not a failure of the write before it. Call it
// only after writes that no git command of the user's follows: git commit,
// rebase, am and fetch run auto maintenance themselves, so a write from
// their hooks, or right after one of them, leaves it to them.
func (r *Repo) AutoGC(ctx context.Context) bool {
	if r.Private || os.Getenv("GIT_QUARANTINE_PATH") != "" {
		return false // a push's quarantine or a shadow store is not to be packed
	}
	loose := r.looseSample()
	if loose < 2 {
		return false // within any gc.auto's limit
	}
	on, limit, ok := r.gcConfigInProcess()
	if !ok {
		on, limit, ok = r.gcConfigFromGit(ctx)
	}
	// git's rule (builtin/gc.c, too_many_loose_objects).
	if !ok || !on || limit <= 0 || int64(loose) <= (limit+255)/256 {
		return false
	}
	cmd := exec.CommandContext(ctx, "git", "gc", "--auto", "--quiet")
	cmd.Dir = r.top()
	cmd.Env = Env(r)
	_ = cmd.Run() // returns once git has detached, or finished when told not to detach
	return true
}

// looseSample counts the loose objects in objects/17.
func (r *Repo) looseSample() int {
	entries, err := os.ReadDir(filepath.Join(r.ObjectDir(), "17"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if len(name) == 2*r.HashLen()-2 && strings.Trim(name, "0123456789abcdef") == "" {
			n++
		}
	}
	return n
}

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
