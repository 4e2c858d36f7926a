package enforce

import (
	"strings"
	"testing"
)

func TestRulesNamed(t *testing.T) {
	for _, c := range []struct {
		name string
		want Rules
		err  bool
	}{
		{"", Rules{}, false},
		{"commits", Rules{}, false},
		{"push", Rules{Blocked: true}, false},
		{"protected", Rules{Blocked: true, Complete: true}, false},
		{"Push", Rules{}, true},
		{"all", Rules{}, true},
	} {
		got, err := RulesNamed(c.name)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("RulesNamed(%q) = %+v, %v", c.name, got, err)
		}
	}
}

func TestFindingString(t *testing.T) {
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{Commit: strings.Repeat("ab", 20), Subject: "fix it", Level: LevelError, Message: "made while Phase 2 was not allowed"},
			"error: abababababab fix it: made while Phase 2 was not allowed"},
		{Finding{Commit: "abc", Subject: "s", Level: LevelWarning, Message: "m"}, "warning: abc s: m"},
		{Finding{Pipeline: "p1", Level: LevelError, Message: "is blocked"}, "error: pipeline p1: is blocked"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
