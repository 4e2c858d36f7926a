package engine

import (
	"bufio"
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Failures are the lines of a test command's output that name a failure,
// each in its one normal form, in the order first seen, without repeats.
// The test command is opaque: only these lines are recognised, each at
// the start of a line (after spaces and colour codes):
//
//	go test    --- FAIL: TestX (0.01s)        -> "--- FAIL: TestX"
//	           FAIL	example.com/pkg	0.2s    -> "FAIL example.com/pkg"
//	pytest     FAILED tests/t.py::test_x - E  -> "FAILED tests/t.py::test_x"
//	jest       ✕ adds (3 ms), FAIL src/a.test.js -> "✕ adds", "FAIL src/a.test.js"
//	TAP        not ok 3 - adds # note         -> "not ok - adds"
//	generic    FAIL: greet prints hello       -> "FAIL: greet prints hello"
//
// A bare FAIL or FAILED names nothing and is not one; nor is a TAP
// "not ok" marked TODO or SKIP, which is not a failure. Durations are
// dropped and spaces collapsed, so that the same failure in two runs
// gives the same line; anything else that differs (a message, a value)
// makes it another failure.
func Failures(out []byte) []string {
	var found []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	sc.Split(scanLines)
	for sc.Scan() {
		if f, ok := Failure(sc.Text()); ok && !seen[f] {
			seen[f] = true
			found = append(found, f)
		}
	}
	return found
}

// maxFailureLine bounds a failure line, in bytes: longer ones are cut.
const maxFailureLine = 200

// scanLines is bufio.ScanLines that gives a line too long for the buffer
// in pieces rather than stopping the scan.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if adv, tok, err := bufio.ScanLines(data, atEOF); adv > 0 || tok != nil || err != nil {
		return adv, tok, err
	}
	if len(data) >= 1<<20-1 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// Failure is line's normal form when it names a failure (see Failures).
func Failure(line string) (string, bool) {
	l := strings.Join(strings.Fields(stripANSI(line)), " ")
	if len(l) > maxFailureLine {
		i := maxFailureLine
		for i > 0 && !utf8.RuneStart(l[i]) {
			i--
		}
		l = strings.TrimSpace(l[:i])
	}
	var f string
	switch {
	case strings.HasPrefix(l, "--- FAIL: "):
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "--- FAIL: "), " ")
		f = "--- FAIL: " + name
	case l == "not ok" || strings.HasPrefix(l, "not ok "):
		f = tapFailure(strings.TrimPrefix(l, "not ok"))
	case strings.HasPrefix(l, "FAILED "):
		id, _, _ := strings.Cut(strings.TrimPrefix(l, "FAILED "), " - ")
		if strings.HasPrefix(id, "(") { // unittest's "FAILED (failures=2)": a count
			return "", false
		}
		f = "FAILED " + id
	case strings.HasPrefix(l, "✕ "):
		f = "✕ " + dropDuration(strings.TrimPrefix(l, "✕ "))
	case strings.HasPrefix(l, "FAIL: "):
		f = "FAIL: " + dropDuration(strings.TrimPrefix(l, "FAIL: "))
	case strings.HasPrefix(l, "FAIL "):
		f = "FAIL " + dropDuration(strings.TrimPrefix(l, "FAIL "))
	}
	switch f = strings.TrimSpace(f); f {
	case "", "--- FAIL:", "FAILED", "✕", "FAIL:", "FAIL", "not ok":
		return "", false // names nothing
	}
	return f, true
}

// tapFailure is the normal form of a TAP "not ok" line, rest what follows
// "not ok": "not ok - description", its number dropped (tests added
// before it renumber it), or "not ok N" when it has no description; ""
// for a TODO or SKIP, which TAP does not count as failing.
func tapFailure(rest string) string {
	rest = strings.TrimSpace(rest)
	desc, directive, _ := strings.Cut(rest, "#")
	if d := strings.ToUpper(strings.TrimSpace(directive)); strings.HasPrefix(d, "TODO") || strings.HasPrefix(d, "SKIP") {
		return ""
	}
	desc = strings.TrimSpace(desc)
	num := ""
	if i := strings.IndexFunc(desc, func(r rune) bool { return r < '0' || r > '9' }); i != 0 {
		if i < 0 {
			i = len(desc)
		}
		if i == len(desc) || desc[i] == ' ' {
			num, desc = desc[:i], strings.TrimSpace(desc[i:])
		}
	}
	desc = strings.TrimSpace(strings.TrimPrefix(desc, "-"))
	switch {
	case desc != "":
		return "not ok - " + desc
	case num != "":
		return "not ok " + num
	}
	return ""
}

// dropDuration drops the durations ending s: go's "0.012s", "(0.01s)"
// and "(cached)", jest's "(3 ms)" and "(5.2 s)".
func dropDuration(s string) string {
	for {
		i := strings.LastIndexByte(s, ' ')
		last := s[i+1:]
		switch {
		case isDuration(last), last == "(cached)",
			strings.HasPrefix(last, "(") && strings.HasSuffix(last, ")") && isDuration(last[1:len(last)-1]):
		case last == "ms)" || last == "s)": // "(3 ms)": the number is the field before
			j := strings.LastIndexByte(s[:max(i, 0)], ' ')
			if i < 0 || !strings.HasPrefix(s[j+1:i], "(") || !isNumber(s[j+2:i]) {
				return s
			}
			i = j
		default:
			return s
		}
		if i < 0 {
			return ""
		}
		s = strings.TrimSpace(s[:i])
	}
}

// isDuration: a number and a unit, s or ms ("0.012s", "3ms").
func isDuration(s string) bool {
	n, ok := strings.CutSuffix(s, "ms")
	if !ok {
		n, ok = strings.CutSuffix(s, "s")
	}
	return ok && isNumber(n)
}

// isNumber: digits, with at most one point inside.
func isNumber(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Count(s, ".") > 1 {
		return false
	}
	return strings.Trim(s, "0123456789.") == ""
}

// stripANSI drops terminal escape sequences (colours) from s, and the
// control characters left.
func stripANSI(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
				j++
			}
			if j < len(s) {
				i = j // the final byte
				continue
			}
		}
		if c == '\t' {
			b.WriteByte(' ')
			continue
		}
		if c < 0x20 || c == 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
