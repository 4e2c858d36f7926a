package terminal

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestNotTerminals(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a pipe": w} {
		if Is(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

// TestTerminalHelper is run under script(1), which gives it a terminal.
func TestTerminalHelper(t *testing.T) {
	if os.Getenv("TERMINAL_HELPER") == "" {
		t.Skip("run by TestTerminal")
	}
	if !Is(os.Stdout) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
}

func TestTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	cmd := exec.Command(script, "-qec", os.Args[0]+" -test.run=TestTerminalHelper -test.v", os.DevNull)
	cmd.Env = append(os.Environ(), "TERMINAL_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTerminalHelper") {
		t.Fatalf("under script(1): %v\n%s", err, out)
	}
}
