package replay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestTemplates: a walk goes on with the work tree's templates until a
// replay swaps some; then with the texts the replay kept in the chain, and
// with the revision its --template-ref named instead of the work tree's.
func TestTemplates(t *testing.T) {
	ctx := context.Background()
	svc, _ := started(t, "p1")
	work := svc.Repo.WorkTree
	overrides := filepath.Join(work, ".crucible", "templates")
	if err := os.MkdirAll(overrides, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(overrides, name+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plan-writer", "the revision's plan writer")
	gittest.Git(t, work, "add", "-A")
	gittest.Git(t, work, "commit", "-q", "-m", "templates")
	rev := gittest.Git(t, work, "rev-parse", "HEAD")
	write("fixer", "the work tree's fixer")

	sources := func(wantMutations map[string]string, want map[string]string) {
		t.Helper()
		set, mutations, err := Templates(ctx, svc, "p1", work)
		if err != nil {
			t.Fatal(err)
		}
		if len(mutations) != len(wantMutations) {
			t.Errorf("mutations %v, want %v", mutations, wantMutations)
		}
		for name, m := range wantMutations {
			if mutations[name] != m {
				t.Errorf("mutation of %s: %q, want %q", name, mutations[name], m)
			}
		}
		for name, source := range want {
			if got := set.Source(name); got != source {
				t.Errorf("%s comes from %q, want %q", name, got, source)
			}
		}
	}
	sources(nil, map[string]string{"fixer": ".crucible/templates/fixer.md", "red-team": "<built-in>/red-team.md"})

	sp := defaultSpec(t)
	src, err := FromChain(ctx, svc, "p1", sp)
	if err != nil {
		t.Fatal(err)
	}
	d := pipeline.ReplayData{Session: "replay-1", From: ledger.Design, Mutations: []string{"red-team.md -> strict.md"}}
	if err := Begin(ctx, svc, src, sp, d, []byte("state\n"), map[string][]byte{"red-team": []byte("strict")}); err != nil {
		t.Fatal(err)
	}
	sources(map[string]string{"red-team": "red-team.md -> strict.md"},
		map[string]string{"fixer": ".crucible/templates/fixer.md", "red-team": "replay/replay-1/red-team.md"})

	d = pipeline.ReplayData{Session: "replay-2", From: ledger.Design, TemplateRef: rev}
	if err := Begin(ctx, svc, src, sp, d, []byte("state\n"), nil); err != nil {
		t.Fatal(err)
	}
	sources(nil, map[string]string{"fixer": "<built-in>/fixer.md", "plan-writer": rev + ":.crucible/templates/plan-writer.md",
		"red-team": "<built-in>/red-team.md"})
}
