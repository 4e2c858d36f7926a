package hooks

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// Mode says what Install does with a hook that is not ours.
type Mode int

const (
	Refuse Mode = iota // leave it alone and fail
	Chain              // move it to <hook>.crucible-chained; ours runs it first
	Force              // move it to <hook>.crucible-backup; ours replaces it
)

// Action is what Install or Uninstall did to one hook.
type Action string

const (
	Installed Action = "installed" // there was none
	Upgraded  Action = "upgraded"  // ours, rewritten
	Unchanged Action = "unchanged" // ours, already as this version writes it
	Chained   Action = "chained"   // a foreign hook moved aside; ours runs it first
	Replaced  Action = "replaced"  // a foreign hook moved aside to a backup
	Kept      Action = "kept"      // a foreign hook that already runs git-crucible
	Removed   Action = "removed"   // ours, deleted
	Restored  Action = "restored"  // ours, replaced by the hook it had moved aside
	Absent    Action = "absent"    // nothing to uninstall
	LeftAlone Action = "left-alone"
)

// Result is what became of one hook.
type Result struct {
	Hook          // as it is now
	Action Action `json:"action"`
	From   string `json:"restored_from,omitempty"` // Restored: the file put back
}

// ForeignError refuses to overwrite hooks that are not ours.
type ForeignError struct{ Hooks []Hook }

func (e *ForeignError) Error() string {
	names := make([]string, len(e.Hooks))
	for i, h := range e.Hooks {
		names[i] = h.Name
	}
	return fmt.Sprintf("not git-crucible's: %s", strings.Join(names, ", "))
}

// AsideError refuses to move a foreign hook where another file already is.
type AsideError struct {
	Hook Hook
	Path string // the chained or backup file in the way
}

func (e *AsideError) Error() string {
	return fmt.Sprintf("%s already exists; %s cannot be moved there", e.Path, e.Hook.Path)
}

// plan decides what Install does to h; aside is where a foreign hook goes.
func plan(h Hook, mode Mode) (action Action, aside string, err error) {
	switch {
	case h.State == Missing:
		return Installed, "", nil
	case h.Ours():
		return Upgraded, "", nil
	case h.RunsCrucible && mode != Force:
		return Kept, "", nil
	case mode == Chain:
		if h.Chained != "" && !h.sameAsChain {
			return "", "", &AsideError{Hook: h, Path: h.Chained}
		}
		return Chained, h.Path + ChainedSuffix, nil
	case mode == Force:
		if h.Backup != "" && !h.sameAsBackup {
			return "", "", &AsideError{Hook: h, Path: h.Backup}
		}
		return Replaced, h.Path + BackupSuffix, nil
	}
	return "", "", &ForeignError{Hooks: []Hook{h}}
}

// Install puts our hook for each name into dir, running fallback when
// git-crucible is not on PATH. Every hook is checked before any is written:
// a refusal (a *ForeignError naming all the foreign hooks, or an
// *AsideError) changes nothing.
func Install(dir string, names []string, fallback string, mode Mode) ([]Result, error) {
	type step struct {
		hook   Hook
		action Action
		aside  string
	}
	var steps []step
	foreign := &ForeignError{}
	for _, name := range names {
		h, err := Inspect(dir, name)
		if err != nil {
			return nil, err
		}
		action, aside, err := plan(h, mode)
		var fe *ForeignError
		switch {
		case errors.As(err, &fe):
			foreign.Hooks = append(foreign.Hooks, fe.Hooks...)
		case err != nil:
			return nil, err
		}
		steps = append(steps, step{h, action, aside})
	}
	if len(foreign.Hooks) > 0 {
		return nil, foreign
	}
	var results []Result
	for _, s := range steps {
		action, err := apply(s.hook, s.action, s.aside, Shim(s.hook.Name, fallback))
		if err != nil {
			return results, err
		}
		h, err := Inspect(dir, s.hook.Name)
		if err != nil {
			return results, err
		}
		results = append(results, Result{Hook: h, Action: action})
	}
	return results, nil
}

// apply carries out a planned action, writing content as the hook.
func apply(h Hook, action Action, aside string, content []byte) (Action, error) {
	switch action {
	case Kept:
		return action, nil
	case Upgraded:
		if string(h.content) == string(content) && !h.NotExecutable {
			return Unchanged, nil
		}
	}
	// Already there when an earlier run stopped between the two steps.
	linked := aside == h.Chained && h.sameAsChain || aside == h.Backup && h.sameAsBackup
	if aside != "" && !linked {
		// A hard link keeps the very file (mode, owner, a symbolic link as
		// itself) and never replaces one already there.
		if err := os.Link(h.Path, aside); err != nil {
			return "", fmt.Errorf("cannot keep %s as %s: %w", h.Path, aside, err)
		}
	}
	return action, fsutil.WriteAtomic(h.Path, content, 0o755)
}

// Uninstall removes our hook for each name from dir and puts back what it
// had moved aside: the chained hook, else the backup. Foreign hooks are
// left alone; a hook that is gone gets back what was moved aside too.
func Uninstall(dir string, names []string) ([]Result, error) {
	var results []Result
	for _, name := range names {
		h, err := Inspect(dir, name)
		if err != nil {
			return results, err
		}
		r := Result{Action: Absent}
		switch {
		case h.State == Foreign:
			r.Action = LeftAlone
		case h.Chained != "":
			r.Action, r.From = Restored, h.Chained
		case h.Backup != "":
			r.Action, r.From = Restored, h.Backup
		case h.Ours():
			r.Action = Removed
			err = os.Remove(h.Path)
		}
		if r.From != "" {
			// Over ours, atomically: the hook is never missing meanwhile.
			err = os.Rename(r.From, h.Path)
		}
		if err != nil {
			return results, err
		}
		if r.Hook, err = Inspect(dir, name); err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}
