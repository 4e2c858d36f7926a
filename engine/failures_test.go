package engine

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFailure(t *testing.T) {
	for _, tc := range []struct {
		line, want string // want "" when the line names no failure
	}{
		// go test
		{"--- FAIL: TestParse (0.00s)", "--- FAIL: TestParse"},
		{"    --- FAIL: TestParse/empty_input (0.01s)", "--- FAIL: TestParse/empty_input"},
		{"FAIL\texample.com/m/parse\t0.012s", "FAIL example.com/m/parse"},
		{"FAIL\texample.com/m/parse [build failed]", "FAIL example.com/m/parse [build failed]"},
		{"FAIL\texample.com/m/parse (cached)", "FAIL example.com/m/parse"},
		{"FAIL", ""},
		{"ok  \texample.com/m/parse\t0.011s", ""},
		{"--- PASS: TestParse (0.00s)", ""},
		{"--- FAIL: ", ""},
		// pytest
		{"FAILED tests/test_users.py::test_email - AssertionError: assert 1 == 2", "FAILED tests/test_users.py::test_email"},
		{"FAILED tests/test_users.py::test_email[a-b]", "FAILED tests/test_users.py::test_email[a-b]"},
		{"FAILED (failures=2)", ""}, // unittest's count
		{"FAILED", ""},
		{"==== 1 failed, 3 passed in 0.12s ====", ""},
		// jest
		{"    ✕ adds 1 + 2 (5 ms)", "✕ adds 1 + 2"},
		{"  ✕ rejects a negative (12ms)", "✕ rejects a negative"},
		{"FAIL src/sum.test.js (5.2 s)", "FAIL src/sum.test.js"},
		{"\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m src/sum.test.js", "FAIL src/sum.test.js"},
		{"  ✓ adds 1 + 2 (1 ms)", ""},
		// TAP
		{"not ok 3 - greet prints a name", "not ok - greet prints a name"},
		{"not ok 12 greet prints a name # with a note", "not ok - greet prints a name"},
		{"not ok 4", "not ok 4"},
		{"not ok 4 - later # TODO not written", ""},
		{"not ok 5 # SKIP no network", ""},
		{"not ok", ""},
		{"ok 1 - greet", ""},
		// generic
		{"FAIL: greet.sh Ada printed 'hello, world', want 'hello, Ada'", "FAIL: greet.sh Ada printed 'hello, world', want 'hello, Ada'"},
		{"FAIL:   spaced\t out  ", "FAIL: spaced out"},
		{"FAIL: ", ""},
		{"FAILURE: x", ""},
		{"a FAIL: in the middle", ""},
		{"fail: lower case", ""},
		{"FAIL: " + strings.Repeat("é", 200), "FAIL: " + strings.Repeat("é", (maxFailureLine-len("FAIL: "))/2)},
	} {
		got, ok := Failure(tc.line)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Failure(%q) = %q, %v; want %q", tc.line, got, ok, tc.want)
		}
	}
}

func TestFailures(t *testing.T) {
	out := "=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:9: wrong\n--- FAIL: TestB (0.00s)\nFAIL\n" +
		"FAIL\texample.com/a\t0.010s\r\n--- FAIL: TestA (0.02s)\nok  \texample.com/b\t0.1s\nFAIL\n"
	want := []string{"--- FAIL: TestA", "--- FAIL: TestB", "FAIL example.com/a"}
	if got := Failures([]byte(out)); !slices.Equal(got, want) {
		t.Errorf("Failures = %q; want %q", got, want)
	}
	if got := Failures([]byte("exit status 1\nsegmentation fault\n")); len(got) != 0 {
		t.Errorf("Failures of output naming none = %q", got)
	}
	// A line longer than the scanner's buffer neither stops the scan nor
	// hides the lines after it.
	long := strings.Repeat("x", 3<<20) + "\nFAIL: after\n"
	if got := Failures([]byte(long)); !slices.Equal(got, []string{"FAIL: after"}) {
		t.Errorf("Failures after a long line = %q", got)
	}
}

// FuzzFailure: a failure line is a normal form (recognised again as
// itself), one line, valid UTF-8 when the input was, and bounded.
func FuzzFailure(f *testing.F) {
	for _, s := range []string{"--- FAIL: TestX (0.00s)", "FAIL\tpkg\t0.1s", "FAILED a.py::t - E", "✕ adds (3 ms)",
		"not ok 1 - x # TODO", "not ok 2 -", "FAIL: x (1 ms)", "\x1b[31mFAIL\x1b[0m x 5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, ok := Failure(line)
		if !ok {
			if got != "" {
				t.Fatalf("Failure(%q) = %q, false", line, got)
			}
			return
		}
		if again, ok := Failure(got); !ok || again != got {
			t.Fatalf("Failure(%q) = %q, but Failure(%q) = %q, %v", line, got, got, again, ok)
		}
		if strings.ContainsAny(got, "\n\r\x1b") || len(got) > maxFailureLine || (utf8.ValidString(line) && !utf8.ValidString(got)) {
			t.Fatalf("Failure(%q) = %q", line, got)
		}
		if fs := Failures([]byte(line + "\n" + line)); !slices.Equal(fs, []string{got}) && !strings.ContainsAny(line, "\n\r") {
			t.Fatalf("Failures(%q twice) = %q; want [%q]", line, fs, got)
		}
	})
}
