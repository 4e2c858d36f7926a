package refs

import (
	"errors"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestArchiveRenamesTheChain(t *testing.T) {
	s, dir := openStore(t)
	for _, e := range []string{"a", "b"} {
		if _, err := s.Append(t.Context(), "p1", who, batchOf(e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetActive("main", "p1", ""); err != nil {
		t.Fatal(err)
	}
	tip := gittest.Git(t, dir, "rev-parse", PipelineRef("p1"))
	got, err := s.Archive(t.Context(), "p1", "main")
	if err != nil || got != tip {
		t.Fatalf("Archive = %q, %v; want %s", got, err, tip)
	}
	if refs := gittest.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/crucible/"); refs != ArchiveRef("p1")+" "+tip {
		t.Fatalf("refs after the archive:\n%s", refs)
	}
	if active, err := s.Active("main"); active != "" || err != nil {
		t.Fatalf("still active: %q, %v", active, err)
	}
	if ids, err := s.List(t.Context()); len(ids) != 0 || err != nil {
		t.Fatalf("List = %v, %v", ids, err)
	}
	if ids, err := s.ListArchived(t.Context()); len(ids) != 1 || ids[0] != "p1" || err != nil {
		t.Fatalf("ListArchived = %v, %v", ids, err)
	}
	if h, err := s.ArchivedHead(t.Context(), "p1"); err != nil || h.Commit != tip || string(h.State) != "\"xx\"\n" {
		t.Fatalf("ArchivedHead = %+v, %v", h, err)
	}
	// A late writer does not start a new chain under the id, a fetched
	// chain is not taken in again, and it cannot be archived twice.
	if _, err := s.Append(t.Context(), "p1", who, batchOf("c")); !errors.Is(err, ErrArchived) {
		t.Fatalf("append to an archived pipeline: %v", err)
	}
	if out, h, err := s.Integrate(t.Context(), "p1", tip, who, nil); out != Archived || h != nil || err != nil {
		t.Fatalf("Integrate = %q, %v, %v", out, h, err)
	}
	if _, err := s.Archive(t.Context(), "p1", "main"); !errors.Is(err, ErrArchived) {
		t.Fatalf("archived twice: %v", err)
	}
	if got := gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/crucible/"); got != ArchiveRef("p1") {
		t.Fatalf("refs after the refusals:\n%s", got)
	}
}

func TestArchiveLeavesAnotherActivePipeline(t *testing.T) {
	s, _ := openStore(t)
	for _, id := range []string{"p1", "p2"} {
		if _, err := s.Append(t.Context(), id, who, batchOf("a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetActive("main", "p2", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(t.Context(), "p1", "main"); err != nil {
		t.Fatal(err)
	}
	if active, err := s.Active("main"); active != "p2" || err != nil {
		t.Fatalf("active = %q, %v", active, err)
	}
	if _, err := s.Archive(t.Context(), "nope", "main"); !errors.Is(err, ErrNoPipeline) {
		t.Fatalf("archive of no pipeline: %v", err)
	}
}
