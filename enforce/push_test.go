package enforce

import (
	"strings"
	"testing"
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
