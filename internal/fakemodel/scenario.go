package fakemodel

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Conds is what a scenario section is selected by: the dispatch's role and
// the values the scripted agent reads from CRUCIBLE_PHASE, _TASK and
// _ROUND ("" when the dispatch has none).
type Conds struct {
	Role, Phase, Task, Round string
}

// Section is the scenario section that plays a dispatch.
type Section struct {
	File       string // the scenario file it is in
	Header     string // its header, without the brackets
	Directives []Directive
}

// Directive kinds: the scripted agent's, and those it skips (APIError,
// Tokens), which only the fake model plays.
const (
	Report   = "report"
	Stdout   = "stdout"
	Write    = "write"
	Append   = "append"
	Remove   = "remove"
	Sleep    = "sleep"
	Exit     = "exit"
	Crash    = "crash"
	Run      = "run"
	APIError = "api-error"
	Tokens   = "tokens"
)

// Directive is one directive of a section: its kind, its argument (the
// rest of its line) and, for report, stdout, write and append, its block:
// every line followed by a newline, as the scripted agent writes it.
type Directive struct {
	Kind  string
	Arg   string
	Block string
}

// maxIncludeDepth is the scripted agent's limit on nested includes.
const maxIncludeDepth = 8

// Select is the section of scenario file that plays the dispatch c, found
// exactly as testdata/agent/scripted finds it: the first section of the
// file whose header's role and conditions all hold, else the first that
// an included file selects, in the order of the include lines. nil, nil
// when none does.
func Select(file string, c Conds) (*Section, error) {
	return selectIn(file, c, 0)
}

func selectIn(file string, c Conds, depth int) (*Section, error) {
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("includes nested too deep at %s", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var includes []string
	var sec *Section
	n := 0
	// The scripted agent reads line by line, and so do we: outside the
	// selected section every line is looked at, also those of other
	// sections' blocks.
	for sc.Scan() {
		line := sc.Text()
		n++
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case sec == nil && strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") && len(line) >= 2:
			header := line[1 : len(line)-1]
			ok, err := matches(header, c)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			if ok {
				sec = &Section{File: file, Header: header}
			}
		case sec != nil && (strings.HasPrefix(line, "[") || strings.HasPrefix(line, "include ")):
			return sec, nil
		case sec == nil && strings.HasPrefix(line, "include "):
			includes = append(includes, strings.Fields(strings.TrimPrefix(line, "include "))...)
		case sec == nil:
		default:
			d, err := directive(line, sc, &n)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			sec.Directives = append(sec.Directives, d)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if sec != nil {
		return sec, nil
	}
	for _, inc := range includes {
		s, err := selectIn(filepath.Join(filepath.Dir(file), inc), c, depth+1)
		if s != nil || err != nil {
			return s, err
		}
	}
	return nil, nil
}

// matches says whether header "role key=value ..." selects c.
func matches(header string, c Conds) (bool, error) {
	words := strings.Fields(header)
	if len(words) == 0 || words[0] != c.Role {
		return false, nil
	}
	for _, cond := range words[1:] {
		key, want, _ := strings.Cut(cond, "=")
		var got string
		switch key {
		case "phase":
			got = c.Phase
		case "task":
			got = c.Task
		case "round":
			got = c.Round
		default:
			return false, fmt.Errorf("unknown condition '%s' (phase=, task=, round=)", cond)
		}
		if want != got {
			return false, nil
		}
	}
	return true, nil
}

// directive parses the directive on line, reading its block from sc.
func directive(line string, sc *bufio.Scanner, n *int) (Directive, error) {
	kind, arg, _ := strings.Cut(line, " ")
	d := Directive{Kind: kind, Arg: arg}
	switch {
	case line == Report || line == Stdout:
		d.Arg = ""
	case line == Crash:
	case kind == Write || kind == Append:
		if err := inWorkTree(arg); err != nil {
			return d, err
		}
	case kind == Remove:
		return d, inWorkTree(arg)
	case kind == Run && arg != "":
		return d, nil
	case kind == Sleep:
		if _, err := strconv.ParseFloat(arg, 64); err != nil {
			return d, fmt.Errorf("sleep wants seconds, not '%s'", arg)
		}
		return d, nil
	case kind == Exit && arg != "":
		return d, nil
	case kind == APIError:
		if _, err := strconv.Atoi(arg); err != nil {
			return d, fmt.Errorf("api-error wants an HTTP status, not '%s'", arg)
		}
		return d, nil
	case kind == Tokens:
		if _, _, err := parseTokens(arg); err != nil {
			return d, err
		}
		return d, nil
	default:
		return d, fmt.Errorf("unknown directive '%s'", line)
	}
	if line == Crash {
		return d, nil
	}
	var b strings.Builder
	for sc.Scan() {
		*n++
		body := sc.Text()
		if body == "." {
			d.Block = b.String()
			return d, nil
		}
		b.WriteString(body)
		b.WriteByte('\n')
	}
	return d, fmt.Errorf("a block is not closed by a line holding only '.'")
}

// inWorkTree refuses a path the scripted agent would refuse: absolute, or
// with a .. that may lead out of the work tree.
func inWorkTree(p string) error {
	if s := "/" + p + "/"; strings.HasPrefix(s, "//") || strings.Contains(s, "/../") {
		return fmt.Errorf("path '%s' is not inside the work tree", p)
	}
	return nil
}

// parseTokens reads "IN OUT".
func parseTokens(arg string) (in, out int, err error) {
	f := strings.Fields(arg)
	if len(f) == 2 {
		in, err = strconv.Atoi(f[0])
		if err == nil {
			out, err = strconv.Atoi(f[1])
		}
		if err == nil && in >= 0 && out >= 0 {
			return in, out, nil
		}
	}
	return 0, 0, fmt.Errorf("tokens wants two counts, IN OUT, not '%s'", arg)
}
