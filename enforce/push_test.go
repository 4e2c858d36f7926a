package enforce

import (
	"reflect"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
)

func TestParsePushInput(t *testing.T) {
	z, a, b := strings.Repeat("0", 40), strings.Repeat("a", 40), strings.Repeat("b", 40)
	got := ParsePushInput("refs/heads/main "+a+" refs/heads/main "+b+"\n(delete) "+z+" refs/heads/x "+a+"\n\njunk\n", false)
	want := []PushRef{{"refs/heads/main", a, "refs/heads/main", b}, {"(delete)", z, "refs/heads/x", a}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("pre-push: %+v", got)
	}
	got = ParsePushInput(b+" "+a+" refs/heads/main\n", true)
	if len(got) != 1 || got[0] != (PushRef{Local: a, RemoteRef: "refs/heads/main", Remote: b}) {
		t.Fatalf("pre-receive: %+v", got)
	}
}

// FuzzParsePushInput: any input parses without panicking, into refs whose
// fields are single words.
func FuzzParsePushInput(f *testing.F) {
	f.Add("refs/heads/main 1111 refs/heads/main 0000\n", false)
	f.Add("0000 1111 refs/heads/main\r\n", true)
	f.Add("\x00 \t\n", false)
	f.Fuzz(func(t *testing.T, in string, receive bool) {
		for _, r := range ParsePushInput(in, receive) {
			for _, w := range []string{r.Local, r.RemoteRef, r.Remote} {
				if w == "" || strings.ContainsAny(w, " \t\n") {
					t.Fatalf("field %q from %q", w, in)
				}
			}
		}
	})
}

func TestPushRevs(t *testing.T) {
	z, l, r := strings.Repeat("0", 40), strings.Repeat("a", 40), strings.Repeat("b", 40)
	moved := PushRef{LocalRef: "refs/heads/main", Local: l, RemoteRef: "refs/heads/main", Remote: r}
	created := PushRef{LocalRef: "refs/heads/main", Local: l, RemoteRef: "refs/heads/main", Remote: z}
	for _, c := range []struct {
		name             string
		ref              PushRef
		perBranch, known bool
		want             gitext.RevSet
	}{
		{"protected, known", moved, true, true, gitext.RevSet{Include: []string{l}, Exclude: []string{r}}},
		{"protected, unknown old commit", moved, true, false, gitext.RevSet{Include: []string{l}}},
		{"protected, new branch", created, true, true, gitext.RevSet{Include: []string{l}}},
		{"known", moved, false, true, gitext.RevSet{Include: []string{l}, Exclude: []string{r}, ExcludeRemote: "origin"}},
		{"unknown old commit", moved, false, false, gitext.RevSet{Include: []string{l}, ExcludeRemote: "origin"}},
		{"new branch", created, false, true, gitext.RevSet{Include: []string{l}, ExcludeRemote: "origin"}},
	} {
		if got := PushRevs(c.ref, "origin", c.perBranch, c.known); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestReceiveRevs(t *testing.T) {
	z, l, r, o := strings.Repeat("0", 40), strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for _, c := range []struct {
		name   string
		remote string
		others []string
		want   gitext.RevSet
	}{
		{"moved", r, []string{o}, gitext.RevSet{Include: []string{l}, Exclude: []string{r}}},
		{"created", z, []string{o, r}, gitext.RevSet{Include: []string{l}, Exclude: []string{o, r}}},
		{"created, no other protected branch", z, nil, gitext.RevSet{Include: []string{l}}},
	} {
		if got := ReceiveRevs(PushRef{Local: l, RemoteRef: "refs/heads/main", Remote: c.remote}, c.others); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestPushRefKinds(t *testing.T) {
	z, l, r := strings.Repeat("0", 40), strings.Repeat("a", 40), strings.Repeat("b", 40)
	for _, c := range []struct {
		ref          PushRef
		audited, new bool
		rng          string
	}{
		{PushRef{Local: l, RemoteRef: "refs/heads/x", Remote: r}, true, false, r + ".." + l},
		{PushRef{Local: l, RemoteRef: "refs/heads/x", Remote: z}, true, true, l},
		{PushRef{Local: z, RemoteRef: "refs/heads/x", Remote: r}, false, false, r + ".." + z},
		{PushRef{Local: l, RemoteRef: "refs/tags/v1", Remote: z}, false, true, l},
		{PushRef{Local: l, RemoteRef: "refs/crucible/pipelines/p", Remote: r}, false, false, r + ".." + l},
	} {
		if c.ref.Audited() != c.audited || c.ref.New() != c.new || c.ref.Range() != c.rng {
			t.Errorf("%+v: audited %v new %v range %s", c.ref, c.ref.Audited(), c.ref.New(), c.ref.Range())
		}
	}
}
