package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-crucible/git-crucible/agent"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/trust"
	"github.com/git-crucible/git-crucible/verifycommits"
)

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:      "trust",
		Usage:     "trust the exact content of a tracked file that names commands to run",
		ArgsUsage: "[<file>]",
		Description: "A tracked file that names commands git-crucible runs (" + agent.TrackedFile + ",\n" +
			".crucible/pipeline.toml, " + verifycommits.TrackedFile + ") is used only in the content you\n" +
			"trusted: a pull request that edits it runs nothing on your machine until you review it again.\n" +
			"Trusting records the file's path and the SHA-256 of its content in this repository's local state (<git-common-dir>/crucible/trust, never\n" +
			"pushed, shared by its worktrees); an edit, a pull or a checkout that changes it makes it untrusted.\n\n" +
			"<file> (relative to the current directory; default: " + agent.TrackedFile + " at the top of the\n" +
			"work tree) must be tracked, inside the work tree, and a regular file: not a symbolic link, nor\n" +
			"under one. --show prints it and its hash and trusts nothing: review, then trust with --sha256\n" +
			"set to the hash you reviewed (12 hex digits will do), so that what changed meanwhile is refused.\n\n" +
			"EXIT STATUS: 0 done; 1 refused (not tracked, a link, outside the work tree, not the --sha256\n" +
			"reviewed, or nothing to revoke);\n" +
			"128 not a git repository or no work tree; 129 usage error.",
		Flags: []cli.Flag{jsonFlag,
			&cli.BoolFlag{Name: "show", Usage: "print the file and its SHA-256; trust nothing"},
			&cli.BoolFlag{Name: "list", Usage: "list the trusted files, and whether each still has the content trusted"},
			&cli.BoolFlag{Name: "revoke", Usage: "forget the trust in <file>"},
			&cli.StringFlag{Name: "sha256", Usage: "trust only if the content's SHA-256 starts with `HEX` (what --show showed)"},
		},
		Action: trustAction,
	}
}

func trustAction(c *cli.Context) error {
	if err := wantArgs(c, 1); err != nil {
		return err
	}
	modes := 0
	for _, f := range []string{"show", "list", "revoke"} {
		if c.Bool(f) {
			modes++
		}
	}
	if modes > 1 {
		return usageErrorf("--show, --list and --revoke cannot be used together")
	}
	if c.Bool("list") && c.NArg() > 0 {
		return usageErrorf("--list takes no <file>")
	}
	want := strings.ToLower(c.String("sha256"))
	if c.IsSet("sha256") && (modes > 0 || len(want) < 12 || len(want) > 64 || strings.Trim(want, "0123456789abcdef") != "") {
		return usageErrorf("--sha256 wants 12 to 64 hex digits, and only when trusting")
	}
	repo, err := gitext.Discover(c.Context)
	if err != nil {
		return err
	}
	if repo.WorkTree == "" {
		return fmt.Errorf("'git crucible trust' needs a work tree")
	}
	w := c.App.Writer
	if c.Bool("list") {
		return trustList(c, repo, w)
	}
	rel, err := trust.WorkTreePath(c.Context, repo, c.Args().First(), agent.TrackedFile)
	if err != nil {
		return err
	}
	if c.Bool("revoke") {
		found, err := trust.Revoke(repo, rel)
		if err != nil {
			return err
		}
		if !found {
			return &refused{Err: fmt.Errorf("%s was not trusted", rel)}
		}
		if c.Bool("json") {
			return writeJSON(w, map[string]any{"revoked": rel}, "  ")
		}
		fmt.Fprintf(w, "Revoked trust in %s\n", rel)
		return nil
	}
	content, err := trust.TrackedContent(c.Context, repo, rel, "an untracked agents file belongs in "+agent.RepositoryFile(repo)+", which needs none")
	if err != nil {
		return err
	}
	if c.Bool("show") {
		if c.Bool("json") {
			return writeJSON(w, map[string]any{"path": rel, "sha256": trust.Hash(content), "content": string(content)}, "  ")
		}
		fmt.Fprintf(w, "# %s (sha256 %s)\n", rel, trust.Hash(content))
		_, err := w.Write(content)
		return err
	}
	if hash := trust.Hash(content); !strings.HasPrefix(hash, want) {
		return &refused{Err: fmt.Errorf("%s has sha256 %s, not the %s reviewed: not trusted", rel, hash[:len(want)], want)}
	}
	e, err := trust.Record(repo, rel, content)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(w, e, "  ")
	}
	fmt.Fprintf(w, "Trusted %s (sha256 %s)\n", e.Path, e.Hash)
	return nil
}

// trustList prints each entry and whether the file still has that content.
func trustList(c *cli.Context, repo *gitext.Repo, w io.Writer) error {
	entries, err := trust.List(repo)
	if err != nil {
		return err
	}
	type row struct {
		trust.Entry
		State string `json:"state"` // trusted, changed, missing
	}
	rows := []row{}
	for _, e := range entries {
		state := "missing"
		if b, err := os.ReadFile(filepath.Join(repo.WorkTree, filepath.FromSlash(e.Path))); err == nil {
			state = "changed"
			if trust.Hash(b) == e.Hash {
				state = "trusted"
			}
		}
		rows = append(rows, row{e, state})
	}
	if c.Bool("json") {
		return writeJSON(w, map[string]any{"trusted": rows}, "  ")
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s %s %-7s %s\n", r.Hash, r.Time.UTC().Format("2006-01-02T15:04:05Z"), r.State, r.Path)
	}
	return nil
}
