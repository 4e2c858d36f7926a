package hooks

// Claude Code's hook entries: the groups in a project's .claude/settings.json
// (or .claude/settings.local.json) that run "git crucible hook claude", so
// that every Agent call of a session is recorded as a dispatch.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// ClaudeCommand is the command Claude Code's hook entries run.
const ClaudeCommand = "git crucible hook claude"

// ClaudeToolMatcher is the matcher of the tool events' entries: the Agent
// tool, and Task, its name before Claude Code 2.1 (which still honours it
// as the Agent tool's).
const ClaudeToolMatcher = "Agent|Task"

// ClaudePreToolMatcher is PreToolUse's: the Agent tool's, and the Write and
// Edit tools', whose writes of build-gate-ledger.md hook claude guards.
const ClaudePreToolMatcher = ClaudeToolMatcher + "|Write|Edit"

// ClaudeEntry is an event git-crucible's entries hook, and their matcher.
type ClaudeEntry struct{ Event, Matcher string }

// ClaudeEntries are the entries InstallClaude writes: the Agent tool's
// calls (and the writes PreToolUse guards), their failures, and what ends
// an agent sent to run on in the background (its SubagentStop; else a
// turn's Stop that no longer lists it, or the session's end).
var ClaudeEntries = []ClaudeEntry{
	{"PreToolUse", ClaudePreToolMatcher},
	{"PostToolUse", ClaudeToolMatcher},
	{"PostToolUseFailure", ClaudeToolMatcher},
	{"SubagentStop", ""},
	{"Stop", ""},
	{"SessionEnd", ""},
}

// Claude Code's settings files, relative to the work tree's top: shared with
// the project (tracked), or the user's own there (git-ignored).
var (
	ClaudeProjectSettings = ".claude" + string(filepath.Separator) + "settings.json"
	ClaudeLocalSettings   = ".claude" + string(filepath.Separator) + "settings.local.json"
)

// ClaudeGroupState is what a settings file has for one event.
type ClaudeGroupState string

const (
	ClaudeGroupOurs     ClaudeGroupState = "ours"     // our entry, as this version writes it
	ClaudeGroupOutdated ClaudeGroupState = "outdated" // entries of ours, not as this version writes them (or twice)
	ClaudeGroupYours    ClaudeGroupState = "yours"    // none of ours, but one of yours runs git-crucible's hook
	ClaudeGroupMissing  ClaudeGroupState = "missing"
)

// Claude settings states, of a whole file.
const (
	ClaudeInstalled = "installed" // every event ours (or yours)
	ClaudeMissing   = "missing"   // none
	ClaudeOutdated  = "outdated"  // some missing or outdated: install completes or rewrites them
)

// ClaudeEvent is one event's state in a settings file.
type ClaudeEvent struct {
	Event string           `json:"event"`
	State ClaudeGroupState `json:"state"`
}

// ClaudeSettings is what a settings file holds of git-crucible's.
type ClaudeSettings struct {
	Path   string        `json:"path"`
	Exists bool          `json:"exists"`
	State  string        `json:"state"`
	Events []ClaudeEvent `json:"events"`
}

// ClaudeResult is what InstallClaude or UninstallClaude did to a file.
type ClaudeResult struct {
	ClaudeSettings          // as it is now
	Action         Action   `json:"action"`            // Installed, Upgraded, Unchanged, Removed, Absent
	Changed        []string `json:"changed,omitempty"` // the events whose entries were written or removed
}

// ClaudeSettingsError is a settings file git-crucible will not change: not
// valid JSON, not shaped as Claude Code's settings, or reached through a
// symbolic link. Nothing was changed.
type ClaudeSettingsError struct {
	Path string
	Msg  string
	// NotFile says it is a symbolic link or not a regular file; else its
	// content is what is wrong.
	NotFile bool
}

func (e *ClaudeSettingsError) Error() string { return e.Path + ": " + e.Msg }

// maxClaudeSettings bounds what is read: settings files are kilobytes.
const maxClaudeSettings = 8 << 20

var errNotSettings = errors.New("git-crucible reads and writes it only as a regular file")

// InspectClaude reads what the settings file at path holds of ours.
func InspectClaude(path string) (ClaudeSettings, error) {
	d, err := readClaude(path)
	if err != nil {
		return ClaudeSettings{}, err
	}
	return d.settings(), nil
}

// InstallClaude puts our entry for each of ClaudeEntries into the settings
// file at path, creating it (and .claude) if need be: after the event's
// other entries, or in place of an outdated one of ours. Entries of yours
// that run git-crucible's hook are left as they are, and no entry of ours
// is added beside them. Nothing else changes: other keys, other entries and
// their order keep their bytes, but for the indentation, made two spaces.
// A file that has all our entries already is not written.
func InstallClaude(path string) (ClaudeResult, error) {
	d, err := readClaude(path)
	if err != nil {
		return ClaudeResult{}, err
	}
	before := d.settings()
	var changed []string
	for _, e := range ClaudeEntries {
		groups := d.groups[e.Event]
		want := claudeGroup(e)
		var kept [][]byte
		placed := false
		switch claudeEventState(groups, want) {
		case ClaudeGroupOurs, ClaudeGroupYours:
			continue
		case ClaudeGroupMissing:
			kept, placed = groups, false
		case ClaudeGroupOutdated:
			for _, g := range groups {
				if ours, _ := classifyClaudeGroup(g); !ours {
					kept = append(kept, g)
				} else if !placed {
					kept, placed = append(kept, want), true
				}
			}
		}
		if !placed {
			kept = append(kept, want)
		}
		d.setGroups(e.Event, kept)
		changed = append(changed, e.Event)
	}
	action := Unchanged
	switch before.State {
	case ClaudeMissing:
		action = Installed
	case ClaudeOutdated:
		action = Upgraded
	}
	if action != Unchanged {
		if err := d.write(); err != nil {
			return ClaudeResult{}, err
		}
	}
	return ClaudeResult{ClaudeSettings: d.settings(), Action: action, Changed: changed}, nil
}

// UninstallClaude removes every entry of ours from the settings file at
// path, whatever its event, and an event's array or the hooks object that
// this leaves empty. Entries of yours are left alone, even when they run
// git-crucible's hook. A file that has none of ours is not written.
func UninstallClaude(path string) (ClaudeResult, error) {
	d, err := readClaude(path)
	if err != nil {
		return ClaudeResult{}, err
	}
	var removed []string
	for _, m := range d.hooks {
		groups, ok := d.groups[m.key]
		if !ok {
			continue
		}
		var kept [][]byte
		for _, g := range groups {
			if ours, _ := classifyClaudeGroup(g); ours {
				if !slices.Contains(removed, m.key) {
					removed = append(removed, m.key)
				}
			} else {
				kept = append(kept, g)
			}
		}
		if len(kept) < len(groups) {
			d.setGroups(m.key, kept)
		}
	}
	if removed == nil {
		return ClaudeResult{ClaudeSettings: d.settings(), Action: Absent}, nil
	}
	if err := d.write(); err != nil {
		return ClaudeResult{}, err
	}
	return ClaudeResult{ClaudeSettings: d.settings(), Action: Removed, Changed: removed}, nil
}

// claudeDoc is a settings file, read.
type claudeDoc struct {
	path   string
	exists bool
	mode   os.FileMode
	top    jsonObject
	hooks  jsonObject          // the "hooks" object's members
	groups map[string][][]byte // each event's array of groups, by event, when it is one
}

// readClaude reads and checks the settings file at path; a missing one is
// an empty object.
func readClaude(path string) (*claudeDoc, error) {
	d := &claudeDoc{path: path, mode: 0o644, groups: map[string][][]byte{}}
	fail := func(format string, args ...any) (*claudeDoc, error) {
		return nil, &ClaudeSettingsError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	notFile := func(msg string) (*claudeDoc, error) {
		return nil, &ClaudeSettingsError{Path: path, Msg: msg, NotFile: true}
	}
	if fi, err := os.Lstat(filepath.Dir(path)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return notFile(fmt.Sprintf("%s is a symbolic link; %v", filepath.Dir(path), errNotSettings))
	}
	raw, err := fsutil.ReadRegular(path, maxClaudeSettings, errNotSettings)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		raw = []byte("{}")
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		if errors.Is(err, errNotSettings) {
			return notFile(strings.TrimPrefix(err.Error(), path+": "))
		}
		return fail("%s", strings.TrimPrefix(err.Error(), path+": ")) // too large
	default:
		d.exists = true
		if fi, err := os.Stat(path); err == nil {
			d.mode = fi.Mode().Perm()
		}
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := se.Offset
			if strings.HasPrefix(se.Error(), "unexpected end") {
				off = int64(len(raw)) + 1 // the end is where it went wrong
			}
			line, col := lineCol(raw, off)
			return fail("not valid JSON: line %d, column %d: %v", line, col, err)
		}
		return fail("not valid JSON: %v", err)
	}
	if d.top, err = parseJSONObject(raw); err != nil {
		return fail("%v", err)
	}
	i := d.top.get("hooks")
	if i < 0 {
		return d, nil
	}
	if d.hooks, err = parseJSONObject(d.top[i].value); err != nil {
		return fail("its \"hooks\": %v", err)
	}
	for _, m := range d.hooks {
		groups, err := parseJSONArray(m.value)
		if err != nil {
			if claudeEvent(m.key) {
				return fail("its \"hooks\".%q: %v", m.key, err)
			}
			continue // not ours to judge
		}
		d.groups[m.key] = groups
	}
	return d, nil
}

// claudeEvent reports whether event is one ClaudeEntries hooks.
func claudeEvent(event string) bool {
	for _, e := range ClaudeEntries {
		if e.Event == event {
			return true
		}
	}
	return false
}

// lineCol is where byte offset off (1-based, as json.SyntaxError has it)
// is in b, 1-based.
func lineCol(b []byte, off int64) (line, col int) {
	before := b[:max(0, min(int(off)-1, len(b)))]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n')
}

// setGroups makes event's array groups, dropping it when it is empty.
func (d *claudeDoc) setGroups(event string, groups [][]byte) {
	d.groups[event] = groups
	if len(groups) == 0 {
		d.hooks = d.hooks.remove(event)
	} else {
		d.hooks = d.hooks.set(event, jsonArrayBytes(groups))
	}
}

// write writes the document back, through a temporary file renamed over
// it; the hooks object goes when nothing is left in it.
func (d *claudeDoc) write() error {
	top := append(jsonObject(nil), d.top...)
	if len(d.hooks) == 0 {
		top = top.remove("hooks")
	} else {
		top = top.set("hooks", d.hooks.bytes())
	}
	if err := fsutil.WriteAtomic(d.path, indentJSON(top.bytes()), d.mode); err != nil {
		return err
	}
	d.exists = true
	return nil
}

// settings is what d holds of ours.
func (d *claudeDoc) settings() ClaudeSettings {
	s := ClaudeSettings{Path: d.path, Exists: d.exists}
	count := map[ClaudeGroupState]int{}
	for _, e := range ClaudeEntries {
		state := claudeEventState(d.groups[e.Event], claudeGroup(e))
		count[state]++
		s.Events = append(s.Events, ClaudeEvent{Event: e.Event, State: state})
	}
	switch {
	case count[ClaudeGroupOurs]+count[ClaudeGroupYours] == len(ClaudeEntries):
		s.State = ClaudeInstalled
	case count[ClaudeGroupMissing] == len(ClaudeEntries):
		s.State = ClaudeMissing
	default:
		s.State = ClaudeOutdated
	}
	return s
}

// claudeGroup is our entry for e, compact.
func claudeGroup(e ClaudeEntry) []byte {
	type hook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	g := struct {
		Matcher string `json:"matcher,omitempty"`
		Hooks   []hook `json:"hooks"`
	}{e.Matcher, []hook{{"command", ClaudeCommand}}}
	b, err := json.Marshal(g)
	if err != nil {
		panic(err)
	}
	return b
}

// claudeEventState is what an event's groups are to us, want being our entry.
func claudeEventState(groups [][]byte, want []byte) ClaudeGroupState {
	var ours, exact, runs int
	for _, g := range groups {
		isOurs, runsOurs := classifyClaudeGroup(g)
		switch {
		case isOurs:
			ours++
			if sameJSON(g, want) {
				exact++
			}
		case runsOurs:
			runs++
		}
	}
	switch {
	case ours == 1 && exact == 1:
		return ClaudeGroupOurs
	case ours > 0:
		return ClaudeGroupOutdated
	case runs > 0:
		return ClaudeGroupYours
	}
	return ClaudeGroupMissing
}

// classifyClaudeGroup says whether a group is ours (every one of its hooks,
// and it has one, runs git-crucible's hook) or runs ours among others.
func classifyClaudeGroup(group []byte) (ours, runs bool) {
	var g struct {
		Hooks []json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(group, &g) != nil || len(g.Hooks) == 0 {
		return false, false
	}
	n := 0
	for _, raw := range g.Hooks {
		var h struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(raw, &h) == nil && runsClaudeHook(h.Command) {
			n++
		}
	}
	return n == len(g.Hooks), n > 0
}

// runsClaudeHook reports whether a command runs git-crucible's Claude Code
// hook: "git crucible hook claude" or "git-crucible hook claude" (through
// any path), with whatever follows.
func runsClaudeHook(command string) bool {
	f := strings.Fields(command)
	switch {
	case len(f) >= 4 && f[0] == "git" && f[1] == "crucible":
		f = f[2:]
	case len(f) >= 3 && filepath.Base(f[0]) == Binary:
		f = f[1:]
	default:
		return false
	}
	return f[0] == "hook" && f[1] == "claude"
}

// sameJSON reports whether two JSON values are the same, whatever their
// spacing and order of keys.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// ClaudeEventSummary says which events are not as this version writes them:
// "PostToolUseFailure, Stop missing; SubagentStop outdated".
func ClaudeEventSummary(events []ClaudeEvent) string {
	var parts []string
	for _, state := range []ClaudeGroupState{ClaudeGroupMissing, ClaudeGroupOutdated} {
		var names []string
		for _, e := range events {
			if e.State == state {
				names = append(names, e.Event)
			}
		}
		if len(names) > 0 {
			parts = append(parts, strings.Join(names, ", ")+" "+string(state))
		}
	}
	return strings.Join(parts, "; ")
}
