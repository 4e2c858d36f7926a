package hooks

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// oursJSON is every entry InstallClaude writes, as it writes them,
// indented by depth levels of two spaces, each but the last followed by a
// comma.
func oursJSON(depth int) string { return oursJSONFrom(depth, 0) }

// oursJSONFrom is oursJSON of ClaudeEntries[from:].
func oursJSONFrom(depth, from int) string {
	var lines []string
	for i, e := range ClaudeEntries[from:] {
		i += from
		end := "]"
		if i < len(ClaudeEntries)-1 {
			end += ","
		}
		lines = append(lines, indentLines(`"`+e.Event+`": [`, depth), oursGroup(e, depth+1), indentLines(end, depth))
	}
	return strings.Join(lines, "\n")
}

// oursGroup is our group for e, indented by depth levels.
func oursGroup(e ClaudeEntry, depth int) string {
	matcher := ""
	if e.Matcher != "" {
		matcher = `  "matcher": "` + e.Matcher + `",` + "\n"
	}
	return indentLines("{\n"+matcher+`  "hooks": [
    {
      "type": "command",
      "command": "git crucible hook claude"
    }
  ]
}`, depth)
}

func indentLines(s string, depth int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = strings.Repeat("  ", depth) + l
		}
	}
	return strings.Join(lines, "\n")
}

func settingsPath(t *testing.T, content string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".claude")
	path := filepath.Join(dir, "settings.json")
	if content != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, path, content, 0o600)
	}
	return path
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// claudeCodeFile is a settings file as Claude Code writes it, with
// entries of the user's own.
const claudeCodeFile = `{
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh"
          }
        ]
      }
    ],
    "Notification": []
  },
  "model": "opus"
}
`

func TestInstallClaude(t *testing.T) {
	tests := []struct {
		name    string
		in      string // "" for no file
		want    string // the file after; "" for the input unchanged (not written)
		action  Action
		changed []string
		states  []ClaudeGroupState // after, by ClaudeEntries
	}{
		{name: "no file", want: "{\n  \"hooks\": {\n" + oursJSON(2) + "\n  }\n}\n", action: Installed},
		{name: "Claude Code's own file", in: claudeCodeFile, action: Installed, want: `{
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh"
          }
        ]
      },
` + oursGroup(ClaudeEntries[0], 3) + `
    ],
    "Notification": [],
` + oursJSONFrom(2, 1) + `
  },
  "model": "opus"
}
`},
		{name: "values keep their bytes, whatever the spacing", in: "{\"a\":1.50,   \"b\" : \"\\u00e9\\/<&>\",\"c\":[ ],\"d\":{}}",
			action: Installed, want: "{\n  \"a\": 1.50,\n  \"b\": \"\\u00e9\\/<&>\",\n  \"c\": [],\n  \"d\": {},\n  \"hooks\": {\n" + oursJSON(2) + "\n  }\n}\n"},
		{name: "an older entry of ours replaced in place, a second one dropped",
			in: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"git-crucible hook claude --strict"}]},{"hooks":[{"type":"command","command":"mine"}]},` +
				`{"matcher":"","hooks":[{"type":"command","command":"git crucible hook claude"}]}]}}`,
			action: Upgraded, changed: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "Stop", "SessionEnd"}},
		{name: "installed before PreToolUse guarded Write and Edit",
			in: `{"hooks":{"PreToolUse":[{"matcher":"Agent|Task","hooks":[{"type":"command","command":"git crucible hook claude"}]}],` +
				`"PostToolUse":[` + string(claudeGroup(ClaudeEntries[1])) + `],"PostToolUseFailure":[` + string(claudeGroup(ClaudeEntries[2])) +
				`],"SubagentStop":[` + string(claudeGroup(ClaudeEntries[3])) + `],"Stop":[` + string(claudeGroup(ClaudeEntries[4])) +
				`],"SessionEnd":[` + string(claudeGroup(ClaudeEntries[5])) + `]}}`,
			want: "{\n  \"hooks\": {\n" + oursJSON(2) + "\n  }\n}\n", action: Upgraded, changed: []string{"PreToolUse"}},
		{name: "partly installed", in: "{\"hooks\":{\"Stop\":[" + string(claudeGroup(ClaudeEntries[4])) + "]}}",
			action: Upgraded, changed: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "SessionEnd"}},
		{name: "an entry of yours that runs the hook is kept, and none added beside it",
			in:     `{"hooks":{"PreToolUse":[{"matcher":"Agent","hooks":[{"type":"command","command":"log.sh"},{"type":"command","command":"git crucible hook claude"}]}]}}`,
			action: Upgraded, changed: []string{"PostToolUse", "PostToolUseFailure", "SubagentStop", "Stop", "SessionEnd"},
			states: []ClaudeGroupState{"yours", "ours", "ours", "ours", "ours", "ours"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := settingsPath(t, tt.in)
			r, err := InstallClaude(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != tt.action || r.State != ClaudeInstalled || !r.Exists || r.Path != path {
				t.Errorf("result %+v", r)
			}
			changed := tt.changed
			if changed == nil {
				changed = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "Stop", "SessionEnd"}
			}
			if !reflect.DeepEqual(r.Changed, changed) {
				t.Errorf("changed %v, want %v", r.Changed, changed)
			}
			states := tt.states
			if states == nil {
				states = []ClaudeGroupState{"ours", "ours", "ours", "ours", "ours", "ours"}
			}
			for i, e := range r.Events {
				if e.Event != ClaudeEntries[i].Event || e.State != states[i] {
					t.Errorf("event %d: %+v, want %s %s", i, e, ClaudeEntries[i].Event, states[i])
				}
			}
			got := read(t, path)
			if tt.want != "" && got != tt.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("not JSON:\n%s", got)
			}
			if tt.in != "" {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("mode %v, %v: want the file's own, 0600", fi.Mode(), err)
				}
			}
			// Again: nothing to do, nothing written.
			before := inode(t, path)
			r, err = InstallClaude(path)
			if err != nil || r.Action != Unchanged || r.Changed != nil {
				t.Fatalf("again: %+v, %v", r, err)
			}
			if read(t, path) != got || inode(t, path) != before {
				t.Fatal("installing again wrote the file")
			}
		})
	}
}

func TestInstallClaudeOutdatedInPlace(t *testing.T) {
	path := settingsPath(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"a"}]},`+
		`{"matcher":"Agent","hooks":[{"type":"command","command":"git crucible hook claude"}]},`+
		`{"matcher":"Edit","hooks":[{"type":"command","command":"b"}]},`+
		`{"matcher":"Agent|Task","hooks":[{"type":"command","command":"/usr/local/bin/git-crucible hook claude"}]}]}}`)
	if _, err := InstallClaude(path); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]json.RawMessage
	}
	if err := json.Unmarshal([]byte(read(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range doc.Hooks["PreToolUse"] {
		var v struct{ Matcher string }
		if err := json.Unmarshal(g, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Matcher)
	}
	if want := []string{"Bash", ClaudePreToolMatcher, "Edit"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("PreToolUse matchers %q, want %q", got, want)
	}
}

func TestClaudeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		setup func(t *testing.T, path string) // instead of in
		msg   string
	}{
		{name: "not JSON", in: "{\n  \"hooks\": {\n    \"Stop\": [],\n  }\n}\n",
			msg: "not valid JSON: line 4, column 3: invalid character '}' looking for beginning of object key string"},
		{name: "empty", in: " ", msg: "not valid JSON: line 1, column 2: unexpected end of JSON input"},
		{name: "an array", in: "[]", msg: "not a JSON object"},
		{name: "a key twice", in: `{"hooks":{},"hooks":{}}`, msg: `the key "hooks" is given twice`},
		{name: "hooks not an object", in: `{"hooks":[]}`, msg: `its "hooks": not a JSON object`},
		{name: "an event twice", in: `{"hooks":{"Stop":[],"Stop":[]}}`, msg: `its "hooks": the key "Stop" is given twice`},
		{name: "an event of ours not an array", in: `{"hooks":{"PreToolUse":{}}}`, msg: `its "hooks"."PreToolUse": not a JSON array`},
		{name: "a symbolic link", setup: func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "settings.json")
			write(t, other, "{}", 0o644)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, msg: "is a symbolic link; git-crucible reads and writes it only as a regular file"},
		{name: ".claude a symbolic link", setup: func(t *testing.T, path string) {
			other := t.TempDir()
			write(t, filepath.Join(other, "settings.json"), "{}", 0o644)
			if err := os.Symlink(other, filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
		}, msg: "is a symbolic link; git-crucible reads and writes it only as a regular file"},
		{name: "a directory", setup: func(t *testing.T, path string) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, msg: "is not a regular file; git-crucible reads and writes it only as a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := settingsPath(t, tt.in)
			if tt.setup != nil {
				tt.setup(t, path)
			}
			before, _ := os.ReadFile(path)
			for op, f := range map[string]func(string) (ClaudeResult, error){"install": InstallClaude, "uninstall": UninstallClaude} {
				_, err := f(path)
				var se *ClaudeSettingsError
				if !errors.As(err, &se) || !strings.HasSuffix(se.Msg, tt.msg) || se.Path != path {
					t.Fatalf("%s: %v, want a *ClaudeSettingsError ending %q", op, err, tt.msg)
				}
				if after, _ := os.ReadFile(path); string(after) != string(before) {
					t.Fatalf("%s changed the file", op)
				}
			}
			if _, err := InspectClaude(path); err == nil {
				t.Fatal("InspectClaude read it")
			}
		})
	}
}

func TestUninstallClaude(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // "" for not written
		action  Action
		changed []string
	}{
		{name: "no file", action: Absent},
		{name: "none of ours", in: claudeCodeFile, action: Absent},
		{name: "ours in a file of ours alone", in: "{\"hooks\":{\n" + oursJSON(1) + "}}", want: "{}\n", action: Removed,
			changed: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "Stop", "SessionEnd"}},
		{name: "ours beside yours, and an older one elsewhere",
			in: `{"model":"opus","hooks":{"Notification":[],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./check.sh"}]},` +
				string(claudeGroup(ClaudeEntries[0])) + `],"SubagentStart":[{"hooks":[{"type":"command","command":"git crucible hook claude"}]}],` +
				`"Stop":[{"hooks":[{"type":"command","command":"git crucible hook claude"},{"type":"command","command":"say done"}]}]},"z":null}`,
			want: `{
  "model": "opus",
  "hooks": {
    "Notification": [],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "git crucible hook claude"
          },
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ]
  },
  "z": null
}
`, action: Removed, changed: []string{"PreToolUse", "SubagentStart"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := settingsPath(t, tt.in)
			r, err := UninstallClaude(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != tt.action || !reflect.DeepEqual(r.Changed, tt.changed) {
				t.Errorf("result %+v", r)
			}
			if tt.in == "" {
				if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("uninstall made %s: %v", path, err)
				}
				return
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := read(t, path); got != want {
				t.Errorf("file:\n%s\nwant:\n%s", got, want)
			}
			if s, err := InspectClaude(path); err != nil || s.State == ClaudeInstalled || s.State == ClaudeOutdated && tt.name != "ours beside yours, and an older one elsewhere" {
				t.Errorf("after: %+v, %v", s, err)
			}
		})
	}
}

func TestInspectClaude(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		state   string
		summary string
	}{
		{"no file", "", ClaudeMissing, "PreToolUse, PostToolUse, PostToolUseFailure, SubagentStop, Stop, SessionEnd missing"},
		{"none", claudeCodeFile, ClaudeMissing, "PreToolUse, PostToolUse, PostToolUseFailure, SubagentStop, Stop, SessionEnd missing"},
		{"all", "{\"hooks\":{\n" + oursJSON(1) + "}}", ClaudeInstalled, ""},
		{"some, one older", `{"hooks":{"PreToolUse":[` + string(claudeGroup(ClaudeEntries[0])) +
			`],"Stop":[{"hooks":[{"type":"command","command":"git crucible hook claude 2>/dev/null"}]}]}}`,
			ClaudeOutdated, "PostToolUse, PostToolUseFailure, SubagentStop, SessionEnd missing; Stop outdated"},
		{"an event's value not an array, not ours", `{"hooks":{"Other":7}}`, ClaudeMissing, "PreToolUse, PostToolUse, PostToolUseFailure, SubagentStop, Stop, SessionEnd missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := InspectClaude(settingsPath(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if s.State != tt.state || ClaudeEventSummary(s.Events) != tt.summary || s.Exists != (tt.in != "") {
				t.Errorf("InspectClaude = %+v (%s)", s, ClaudeEventSummary(s.Events))
			}
		})
	}
}

func TestRunsClaudeHook(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git crucible hook claude":                      true,
		"  git   crucible hook claude --strict":         true,
		"git-crucible hook claude":                      true,
		"/opt/bin/git-crucible hook claude 2>/dev/null": true,
		"git crucible hook run pre-commit":              false,
		"git crucible hook":                             false,
		"git-crucible-hook claude":                      false,
		"echo git crucible hook claude":                 false,
		"":                                              false,
	} {
		if got := runsClaudeHook(cmd); got != want {
			t.Errorf("runsClaudeHook(%q) = %v", cmd, got)
		}
	}
}

// FuzzClaudeSettings: whatever a settings file holds, InstallClaude either
// refuses it, changing nothing, or makes it installed keeping every other
// entry in its order; a second install writes nothing; UninstallClaude
// then leaves none of ours and the rest of the file as it was.
func FuzzClaudeSettings(f *testing.F) {
	f.Add([]byte(claudeCodeFile))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"git-crucible hook claude"}]},{"hooks":[]}],"PreToolUse":"x"}}`))
	f.Add([]byte(`{"a":[1,{"b":"\u00e9"}],"hooks":{"SubagentStop":[{"matcher":"x","hooks":[{"command":"git crucible hook claude"},{"command":"y"}]}]}}`))
	f.Add([]byte(`{"hooks":{},"hooks":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, inspectErr := InspectClaude(path)
		r, err := InstallClaude(path)
		if (err == nil) != (inspectErr == nil) {
			t.Fatalf("install %v, inspect %v", err, inspectErr)
		}
		if err != nil {
			var se *ClaudeSettingsError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v", err, err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(data) {
				t.Fatal("a refused file was changed")
			}
			return
		}
		installed := []byte(read(t, path))
		if !json.Valid(installed) || r.State != ClaudeInstalled {
			t.Fatalf("installed %+v:\n%s", r, installed)
		}
		if r2, err := InstallClaude(path); err != nil || r2.Action != Unchanged || read(t, path) != string(installed) {
			t.Fatalf("second install %+v, %v", r2, err)
		}
		theirs := func(b []byte) map[string][]string {
			d, err := readClaude(writeTemp(t, b))
			if err != nil {
				t.Fatal(err)
			}
			out := map[string][]string{}
			for ev, groups := range d.groups {
				for _, g := range groups {
					if ours, _ := classifyClaudeGroup(g); !ours {
						var v any
						_ = json.Unmarshal(g, &v)
						c, _ := json.Marshal(v)
						out[ev] = append(out[ev], string(c))
					}
				}
			}
			return out
		}
		if a, b := theirs(data), theirs(installed); !reflect.DeepEqual(a, b) {
			t.Fatalf("other entries changed:\n%v\n%v", a, b)
		}
		if _, err := UninstallClaude(path); err != nil {
			t.Fatal(err)
		}
		after := []byte(read(t, path))
		d, err := readClaude(path)
		if err != nil {
			t.Fatal(err)
		}
		for ev, groups := range d.groups {
			for _, g := range groups {
				if ours, _ := classifyClaudeGroup(g); ours {
					t.Fatalf("an entry of ours left in %s", ev)
				}
			}
		}
		if a, b := theirs(data), theirs(after); !reflect.DeepEqual(a, b) {
			t.Fatalf("other entries changed by uninstall:\n%v\n%v", a, b)
		}
		var x, y map[string]any
		if json.Unmarshal(data, &x) != nil || json.Unmarshal(after, &y) != nil {
			t.Fatal("not an object")
		}
		delete(x, "hooks")
		delete(y, "hooks")
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("other keys changed:\n%v\n%v", x, y)
		}
	})
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
