// Command timer compares the wall-clock time of two commands, as whole
// processes, the way a hook or a user runs them. It runs them interleaved
// (A B A B ...) so that machine drift (frequency scaling, other load, page
// cache) hits both alike, and prints one line: the medians, their ratio and
// PASS or MISS against a goal on that ratio.
//
//	timer -name hot-path -n 300 -goal 1.5 \
//	    -a 'git crucible ledger check --quiet' -b 'git rev-parse HEAD'
//
// Commands are split into words like a shell would for simple cases (blanks,
// '...' and "..." quoting, no expansions) and run directly, not through a
// shell, so neither side pays for one. A word may hold {alt:X|Y|...}: run i
// of that command uses the (i mod k)-th choice, for commands that must change
// something on every run. -pre-a and -pre-b run, untimed, before every run
// of their command (e.g. to drop a cache). Output goes to /dev/null; a failed
// run aborts, after a first checked run that shows the command's output.
//
// With -header it prints the column headings and exits; with -row it prints
// the remaining arguments as a row, for figures measured elsewhere. With
// -repeat N it runs -a N times in sequence, untimed one by one, and prints
// the total (for building test repositories without a shell loop's cost).
//
// With -inittrace it compares, instead of wall times, the two commands'
// package initialisation: each run under GODEBUG=inittrace=1, the sum of its
// packages' init clock times (medians of the runs), then whose packages -a's
// is (ours, dependencies, the standard library) and its slowest ones.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/git-crucible/git-crucible/internal/inittrace"
)

const rowFormat = "%-34s %11s %11s %7s %8s  %s\n"

func main() {
	var (
		name   = flag.String("name", "bench", "benchmark name")
		n      = flag.Int("n", 200, "timed runs of each command")
		warmup = flag.Int("warmup", 5, "untimed runs of each command first")
		goal   = flag.Float64("goal", 0, "PASS when ours/baseline median ratio is at most this (0: informational)")
		a      = flag.String("a", "", "our command")
		b      = flag.String("b", "", "the baseline command")
		preA   = flag.String("pre-a", "", "untimed command run before each run of -a")
		preB   = flag.String("pre-b", "", "untimed command run before each run of -b")
		header = flag.Bool("header", false, "print the column headings and exit")
		row    = flag.Bool("row", false, "print the arguments (name ours baseline ratio goal result) as a row and exit")
		spread = flag.Bool("spread", false, "also print each side's p10..p90 on a second line")
		repeat = flag.Int("repeat", 0, "run -a this many times in sequence, print the total and exit")
		once   = flag.Bool("once", false, "run -a once and print its wall time (ms) and peak memory (KiB)")
		own    = flag.Bool("own", false, "with -once, also print the peak memory of -a's process alone (KiB), without its children")
		cpu    = flag.Bool("cpu", false, "with -once, also print the CPU time (ms, user and system) of -a and the children it waited for, last")
		inits  = flag.Bool("inittrace", false, "compare the package initialisation of -a and -b (GODEBUG=inittrace=1), not their wall time")
	)
	flag.Parse()
	if *once {
		c := mustParse(*a)
		c.own = *own
		start := time.Now()
		if err := c.run(true); err != nil {
			fatal(err)
		}
		fmt.Printf("%.0f %d", float64(time.Since(start))/1e6, c.maxRSS)
		if *own {
			fmt.Printf(" %d", c.ownRSS)
		}
		if *cpu {
			fmt.Printf(" %.0f", float64(c.cpu)/1e6)
		}
		fmt.Println()
		return
	}
	if *repeat > 0 {
		if *a == "" {
			fatal(fmt.Errorf("-repeat needs -a"))
		}
		c := mustParse(*a)
		start := time.Now()
		for i := 0; i < *repeat; i++ {
			if err := c.run(i == 0); err != nil {
				fatal(err)
			}
		}
		d := time.Since(start)
		fmt.Printf("ran %d x %s: %.1f s, %.2f ms each\n", *repeat, *a, d.Seconds(), float64(d)/1e6/float64(*repeat))
		return
	}
	if *header {
		fmt.Printf(rowFormat, "benchmark", "ours", "baseline", "ratio", "goal", "result")
		fmt.Printf(rowFormat, strings.Repeat("-", 34), strings.Repeat("-", 11), strings.Repeat("-", 11),
			strings.Repeat("-", 7), strings.Repeat("-", 8), "------")
		return
	}
	if *row {
		args := flag.Args()
		for len(args) < 6 {
			args = append(args, "")
		}
		fmt.Printf(rowFormat, args[0], args[1], args[2], args[3], args[4], strings.Join(args[5:], " "))
		return
	}
	if *a == "" || *b == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "timer: need -a, -b and -n >= 1")
		os.Exit(2)
	}
	cmdA, cmdB := mustParse(*a), mustParse(*b)
	var pa, pb *command
	if *preA != "" {
		pa = mustParse(*preA)
	}
	if *preB != "" {
		pb = mustParse(*preB)
	}

	measure := timed
	var traced [][]inittrace.Init // -a's runs, with -inittrace
	if *inits {
		cmdA.trace, cmdB.trace = new(bytes.Buffer), new(bytes.Buffer)
		measure = func(pre, c *command) (time.Duration, error) {
			if _, err := timed(pre, c); err != nil {
				return 0, err
			}
			in := inittrace.Parse(c.trace.Bytes())
			if len(in) == 0 {
				return 0, fmt.Errorf("%s: no init lines under GODEBUG=inittrace=1 (not a Go program?)", c.text)
			}
			if c == cmdA {
				traced = append(traced, in)
			}
			all, _ := inittrace.Sum(in)
			return msDuration(all.Clock), nil
		}
	}

	// One checked run each, showing the output if it fails.
	for _, c := range []*command{pa, cmdA, pb, cmdB} {
		if c != nil {
			if err := c.run(true); err != nil {
				fatal(err)
			}
		}
	}
	for i := 0; i < *warmup; i++ {
		for _, p := range [][2]*command{{pa, cmdA}, {pb, cmdB}} {
			if _, err := measure(p[0], p[1]); err != nil {
				fatal(err)
			}
		}
	}
	traced = traced[:0]
	ta := make([]time.Duration, 0, *n)
	tb := make([]time.Duration, 0, *n)
	for i := 0; i < *n; i++ {
		// Alternate which side goes first, so neither always follows the other.
		first, second := [2]*command{pa, cmdA}, [2]*command{pb, cmdB}
		if i%2 == 1 {
			first, second = second, first
		}
		for _, p := range [][2]*command{first, second} {
			d, err := measure(p[0], p[1])
			if err != nil {
				fatal(err)
			}
			if p[1] == cmdA {
				ta = append(ta, d)
			} else {
				tb = append(tb, d)
			}
		}
	}
	ma, mb := median(ta), median(tb)
	ratio := float64(ma) / float64(mb)
	goalText, result := "-", "INFO"
	if *goal > 0 {
		goalText = fmt.Sprintf("<=%.2gx", *goal)
		result = "PASS"
		if ratio > *goal {
			result = "MISS"
		}
	}
	fmt.Printf(rowFormat, *name, ms(ma), ms(mb), fmt.Sprintf("%.2fx", ratio), goalText,
		fmt.Sprintf("%s (n=%d)", result, *n))
	if *spread {
		fmt.Printf("%-34s   ours p10..p90 %s..%s   baseline p10..p90 %s..%s\n", "",
			ms(pct(ta, 10)), ms(pct(ta, 90)), ms(pct(tb, 10)), ms(pct(tb, 90)))
	}
	if *inits {
		printInits(traced)
	}
}

// printInits prints, under a -inittrace row, whose packages -a's
// initialisation is and its slowest packages: medians over runs (each
// kind's and package's own, so they need not add up to the row's), and
// allocations, which are the same in every run.
func printInits(runs [][]inittrace.Init) {
	var kinds [3][]time.Duration
	var allocs [3]int64
	clocks := map[string][]time.Duration{}
	for _, run := range runs {
		_, by := inittrace.Sum(run)
		for k := range by {
			kinds[k] = append(kinds[k], msDuration(by[k].Clock))
			allocs[k] = by[k].Allocs
		}
		for _, in := range run {
			clocks[in.Package] = append(clocks[in.Package], msDuration(in.Clock))
		}
	}
	var parts []string
	for _, k := range []inittrace.Kind{inittrace.Ours, inittrace.Dep, inittrace.Std} {
		parts = append(parts, fmt.Sprintf("%v %s, %d allocs", k, ms(median(kinds[k])), allocs[k]))
	}
	fmt.Printf("%-34s   %s\n", "", strings.Join(parts, "; "))
	last := runs[len(runs)-1]
	slices.SortStableFunc(last, func(x, y inittrace.Init) int {
		return int(median(clocks[y.Package]) - median(clocks[x.Package]))
	})
	parts = parts[:0]
	for _, in := range last[:min(6, len(last))] {
		parts = append(parts, fmt.Sprintf("%s %s (%d allocs)", in.Package, ms(median(clocks[in.Package])), in.Allocs))
	}
	fmt.Printf("%-34s   slowest: %s\n", "", strings.Join(parts, ", "))
}

// msDuration is a time in milliseconds as a Duration.
func msDuration(ms float64) time.Duration { return time.Duration(ms * 1e6) }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "timer:", err)
	os.Exit(1)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if p == 50 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[(len(s)-1)*p/100]
}

// timed runs pre (untimed, may be nil) then c, and returns c's wall time.
func timed(pre, c *command) (time.Duration, error) {
	if pre != nil {
		if err := pre.run(false); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	err := c.run(false)
	return time.Since(start), err
}

type command struct {
	maxRSS int64 // of the last run, KiB: the process's or its children's, the highest
	// ownRSS is the last run's own peak (KiB), when own: its VmHWM, read
	// from /proc while it runs (the kernel reports the whole tree's at exit).
	ownRSS int64
	own    bool
	// cpu is the last run's user and system time, its waited-for
	// descendants' included (wait4 reports them together).
	cpu   time.Duration
	text  string
	path  string
	words [][]string // per word, its choices (one unless {alt:...})
	runs  int
	null  *os.File
	// trace, when set, runs the command under GODEBUG=inittrace=1 and
	// keeps the last run's standard error.
	trace *bytes.Buffer
}

var altRE = regexp.MustCompile(`\{alt:([^}]*)\}`)

func mustParse(s string) *command {
	words, err := split(s)
	if err != nil || len(words) == 0 {
		fatal(fmt.Errorf("cannot parse command %q: %v", s, err))
	}
	c := &command{text: s}
	for _, w := range words {
		if m := altRE.FindStringSubmatchIndex(w); m != nil {
			var choices []string
			for _, alt := range strings.Split(w[m[2]:m[3]], "|") {
				choices = append(choices, w[:m[0]]+alt+w[m[1]:])
			}
			c.words = append(c.words, choices)
		} else {
			c.words = append(c.words, []string{w})
		}
	}
	if c.path, err = exec.LookPath(c.words[0][0]); err != nil {
		fatal(err)
	}
	if c.null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
		fatal(err)
	}
	return c
}

func (c *command) run(show bool) error {
	args := make([]string, len(c.words))
	for i, choices := range c.words {
		args[i] = choices[c.runs%len(choices)]
	}
	c.runs++
	cmd := exec.Command(c.path, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Stdin = c.null
	var out bytes.Buffer
	switch {
	case show:
		cmd.Stdout, cmd.Stderr = &out, &out
	case c.trace != nil:
		c.trace.Reset()
		cmd.Stdout, cmd.Stderr = c.null, c.trace
	default:
		cmd.Stdout, cmd.Stderr = c.null, c.null
	}
	if c.trace != nil {
		godebug := "inittrace=1"
		if v := os.Getenv("GODEBUG"); v != "" {
			godebug = v + "," + godebug
		}
		cmd.Env = append(os.Environ(), "GODEBUG="+godebug)
	}
	err := cmd.Start()
	if err == nil {
		done, own := make(chan struct{}), make(chan int64, 1)
		if c.own {
			go sampleOwn(cmd.Process.Pid, done, own)
		}
		err = cmd.Wait()
		close(done)
		if c.own {
			c.ownRSS = <-own
		}
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			c.maxRSS = ru.Maxrss // KiB on Linux
			c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if !show {
			msg = "(output discarded; the first, checked run succeeded)"
		}
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// sampleOwn reads the VmHWM of process pid every 20 ms until done, then
// sends the highest: its peak, but for the growth of its last 20 ms.
func sampleOwn(pid int, done <-chan struct{}, peak chan<- int64) {
	var high int64
	status := fmt.Sprintf("/proc/%d/status", pid)
	for {
		if b, err := os.ReadFile(status); err == nil {
			var kib int64
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				if _, err := fmt.Sscan(string(b[i+len("VmHWM:"):]), &kib); err == nil {
					high = max(high, kib)
				}
			}
		}
		select {
		case <-done:
			peak <- high
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// split breaks s into words: blanks separate, '...' is literal, "..." allows
// \" and \\ escapes. No expansions.
func split(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf(`unterminated "`)
			}
			in = true
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
