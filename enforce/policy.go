package enforce

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// PushPolicy is the crucible.* configuration the push hooks follow.
type PushPolicy struct {
	Mode      string   // crucible.pushPolicy: gated, verified, complete or off
	Protected []string // crucible.protectedBranches: their pushes need complete pipelines
	History   bool     // crucible.pushHistory: sync the pushed commits' pipelines along
}

// pushPolicyConfig selects the keys ReadPushPolicy reads.
const pushPolicyConfig = `^crucible\.(pushpolicy|protectedbranches|pushhistory)$`

// PolicyError is a crucible.pushPolicy that is none of the known modes.
type PolicyError struct{ Value string }

func (e *PolicyError) Error() string { return fmt.Sprintf("crucible.pushPolicy is '%s'", e.Value) }

// pushModes are the values crucible.pushPolicy takes.
var pushModes = []string{"gated", "verified", "complete", "off"}

// ReadPushPolicy reads the push policy from git's configuration.
func ReadPushPolicy(ctx context.Context, repo *gitext.Repo) (PushPolicy, error) {
	entries, err := repo.ConfigEntries(ctx, pushPolicyConfig)
	if err != nil {
		return PushPolicy{}, err
	}
	return ParsePushPolicy(entries)
}

// ParsePushPolicy reads the policy from config entries (lower-case keys,
// the last of each winning); unset keys keep their defaults: gated, with
// main and master protected.
func ParsePushPolicy(entries []gitext.ConfigEntry) (PushPolicy, error) {
	p := PushPolicy{Mode: "gated", Protected: []string{"main", "master"}}
	for _, e := range entries {
		switch strings.ToLower(e.Key) {
		case "crucible.pushpolicy":
			p.Mode = e.Value
		case "crucible.protectedbranches":
			p.Protected = strings.FieldsFunc(e.Value, func(r rune) bool { return r == ',' || r == ' ' })
		case "crucible.pushhistory":
			b, ok := gitBool(e)
			if !ok {
				return p, fmt.Errorf("bad boolean config value '%s' for '%s'", e.Value, strings.ToLower(e.Key))
			}
			p.History = b
		}
	}
	if !slices.Contains(pushModes, p.Mode) {
		return p, &PolicyError{Value: p.Mode}
	}
	return p, nil
}

// gitBool reads a boolean as git config --type=bool does: a key without
// "=" is true, "key =" false, the words in any case, and an integer (with
// a k, m or g unit) true unless 0.
func gitBool(e gitext.ConfigEntry) (value, ok bool) {
	if e.NoValue {
		return true, true
	}
	v := e.Value
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "", "false", "no", "off":
		return false, true
	}
	n, err := strconv.ParseInt(strings.TrimRight(v, "kKmMgG"), 10, 64)
	if err != nil || len(v)-len(strings.TrimRight(v, "kKmMgG")) > 1 {
		return false, false
	}
	return n != 0, true
}

// Off reports whether the push hooks check nothing.
func (p PushPolicy) Off() bool { return p.Mode == "off" }

// RulesFor is what a push to remoteRef must satisfy: no blocked pipelines,
// and complete ones for a protected branch (or every branch, with
// crucible.pushPolicy=complete); with crucible.pushPolicy=verified, every
// pushed commit known-good in the gate cache too.
func (p PushPolicy) RulesFor(remoteRef string) Rules {
	branch := strings.TrimPrefix(remoteRef, "refs/heads/")
	return Rules{Blocked: true, Complete: p.Mode == "complete" || slices.Contains(p.Protected, branch), Verified: p.Mode == "verified"}
}
