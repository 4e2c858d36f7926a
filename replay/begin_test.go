package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// TestCheckBegin: a replay is refused on another branch than its run's,
// from a phase the ledger does not let begin, and from a boundary with no
// checkpoint left unless it resumes on the work tree as it is.
func TestCheckBegin(t *testing.T) {
	st := &pipeline.State{}
	at := func(phase int, checkpoint string, gone bool) *Resume {
		r := &Resume{Gone: gone}
		r.Phase = ledger.Phase(phase)
		r.Boundary.Checkpoint, r.Boundary.Reason = checkpoint, "phase boundary"
		return r
	}
	for _, tc := range []struct {
		name    string
		src     *Source
		r       *Resume
		branch  string
		current bool
		want    string // the refusal's start, "" for none
	}{
		{"same branch, checkpoint", &Source{Branch: "main"}, at(1, "abc", false), "main", false, ""},
		{"no branch recorded", &Source{}, at(1, "abc", false), "other", false, ""},
		{"another branch", &Source{Branch: "main"}, at(1, "abc", false), "topic", false, "Pipeline was running on branch main but you are on topic."},
		{"detached", &Source{Branch: "main"}, at(1, "abc", false), "", false, "Pipeline was running on branch main but you are on no branch (a detached HEAD)."},
		{"no checkpoint", &Source{}, at(1, "", false), "main", false, "no checkpoint is left to restore the Phase 1 boundary (phase boundary) from"},
		{"checkpoint gone", &Source{}, at(1, "abc", true), "main", false, "no checkpoint is left"},
		{"no checkpoint, current tree", &Source{}, at(1, "", true), "main", true, ""},
		{"a phase the ledger blocks", &Source{}, at(3, "abc", false), "main", false, "Phase 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckBegin(tc.src, st, tc.r, tc.branch, tc.current)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var rf *outcome.Refused
			if !errors.As(err, &rf) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal with %q", err, tc.want)
			}
		})
	}
}
