package enforce

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// styleConfig selects the keys that decide how git cleans a message up.
const styleConfig = `^(core\.commentchar|core\.commentstring|commit\.template)$`

// ReadStyle reads what decides how git will clean a commit message up.
func ReadStyle(ctx context.Context, repo *gitext.Repo) (Style, error) {
	if !repo.ConfigMayMention("commentchar", "commentstring", "template") {
		return Style{}, nil // git's defaults, known without starting git config
	}
	entries, err := repo.ConfigEntries(ctx, styleConfig)
	if err != nil {
		return Style{}, err
	}
	return StyleOf(entries, os.Getenv("HOME")), nil
}

// StyleOf reads the style from config entries; a commit.template starting
// with ~/ is under home. A template that cannot be read is none, as for git.
func StyleOf(entries []gitext.ConfigEntry, home string) Style {
	var st Style
	for _, e := range entries {
		switch strings.ToLower(e.Key) {
		case "core.commentchar", "core.commentstring": // git 2.45 allows a string; its first byte starts it
			st.CommentChars = e.Value[:min(1, len(e.Value))]
			if e.Value == "auto" {
				st.CommentChars = AutoCommentChars
			}
		case "commit.template":
			path := e.Value
			if rest, ok := strings.CutPrefix(path, "~/"); ok {
				path = filepath.Join(home, rest)
			}
			if b, err := os.ReadFile(path); err == nil {
				st.Template = string(b)
			}
		}
	}
	return st
}
