package hooks

import (
	"context"
	"path/filepath"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/notes"
)

// Locate finds where git runs repo's hooks from, as git does: the Setup
// fields that come from the repository (Dir, DefaultDir, HooksPath, Bare and
// the Config Doctor reads, and the WorkTree).
func Locate(ctx context.Context, repo *gitext.Repo) (Setup, error) {
	s := Setup{DefaultDir: filepath.Join(repo.CommonDir, "hooks"), Bare: repo.Bare, WorkTree: repo.WorkTree}
	var err error
	if s.Dir, err = repo.HooksDir(ctx); err != nil {
		return s, err
	}
	if s.Config, err = repo.ConfigEntries(ctx, `^core\.hookspath$|`+notes.RewriteConfigKeys); err != nil {
		return s, err
	}
	if !samePath(s.Dir, s.DefaultDir) {
		for i := range s.Config {
			if s.Config[i].Key == "core.hookspath" {
				s.HooksPath = &s.Config[i] // the last one wins
			}
		}
	}
	return s, nil
}

func samePath(a, b string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}

// NotOurs are the gate hooks of repo (Defaults) that git would not run as
// git-crucible's: missing, or someone else's.
func NotOurs(ctx context.Context, repo *gitext.Repo) ([]string, error) {
	dir, err := repo.HooksDir(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, name := range Defaults(repo.Bare) {
		h, err := Inspect(dir, name)
		if err != nil {
			return nil, err
		}
		if !h.Ours() {
			missing = append(missing, name)
		}
	}
	return missing, nil
}
