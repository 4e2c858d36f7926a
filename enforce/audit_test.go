package enforce

import "testing"

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
