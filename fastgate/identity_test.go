package fastgate

import "testing"

func TestIdentity(t *testing.T) {
	a := Identity("make", "")
	if len(a) != 32 || a == Identity("make ", "") || a == Identity("make", "go1.26") || a != Identity("make", "") {
		t.Errorf("Identity does not tell command and fingerprint apart: %s", a)
	}
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	if f, err := Fingerprint(t.Context(), dir, " "); err != nil || f != "" {
		t.Errorf("no toolchain: %q, %v; want \"\"", f, err)
	}
	a, err := Fingerprint(t.Context(), dir, "echo go1.26")
	if err != nil || len(a) != 64 {
		t.Fatalf("Fingerprint = %q, %v", a, err)
	}
	if b, _ := Fingerprint(t.Context(), dir, "echo go1.27"); b == a {
		t.Errorf("two toolchains, one fingerprint %s", a)
	}
	if _, err := Fingerprint(t.Context(), dir, "exit 3"); err == nil {
		t.Errorf("a failing toolchain command gave a fingerprint")
	}
}
