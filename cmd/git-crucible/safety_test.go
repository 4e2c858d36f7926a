package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// These tests prove the data-safety claims with real processes: the test
// binary stands in for git-crucible on PATH (see TestMain).

const testID = "build-20261122-100000-safe01"

// gitCrucible runs git crucible in dir and fails the test unless it succeeds.
func gitCrucible(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCrucibleErr(dir, args...)
	if err != nil {
		t.Fatalf("git crucible %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitCrucibleErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"crucible"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startedRepo is a repository whose active pipeline has Phase 1 IN_PROGRESS,
// so that every `gate verdict 1 --verdict FAIL` appends exactly one event.
func startedRepo(t *testing.T) string {
	dir := gittest.Init(t)
	gitCrucible(t, dir, "start", "safety", "--id", testID)
	gitCrucible(t, dir, "ledger", "begin", "1")
	return dir
}

// chainRounds returns the --rounds of every verdict on the chain and the
// chain's event count, read through `git crucible log --json`.
func chainRounds(t *testing.T, dir string) (map[int]bool, int) {
	t.Helper()
	var events []struct {
		Seq  int64           `json:"seq"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "log", "--json")), &events); err != nil {
		t.Fatal(err)
	}
	rounds := map[int]bool{}
	for i, e := range events {
		if want := int64(len(events) - i); e.Seq != want {
			t.Fatalf("event %d has seq %d, want %d: the chain has a gap", i, e.Seq, want)
		}
		if e.Type == "gate.verdict" {
			var d struct{ Rounds int }
			json.Unmarshal(e.Data, &d)
			rounds[d.Rounds] = true
		}
	}
	return rounds, len(events)
}

// assertSound checks git's and git-crucible's view of the repository.
func assertSound(t *testing.T, dir string) {
	t.Helper()
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if out := gitCrucible(t, dir, "verify", "--all"); !strings.Contains(out, "ok "+testID) {
		t.Fatalf("verify: %s", out)
	}
}

// TestConcurrentAppends: 8 processes append to one pipeline at once; every
// acknowledged append is on the chain, once, in a gap-free sequence.
func TestConcurrentAppends(t *testing.T) {
	dir := startedRepo(t)
	const procs, each = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				n := 1 + p*each + i
				if out, err := gitCrucibleErr(dir, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(n)); err != nil {
					errs <- fmt.Errorf("append %d: %v\n%s", n, err, out)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rounds, count := chainRounds(t, dir)
	if want := 2 + procs*each; count != want {
		t.Fatalf("chain has %d events, want %d", count, want)
	}
	for n := 1; n <= procs*each; n++ {
		if !rounds[n] {
			t.Errorf("append %d was acknowledged but is not on the chain", n)
		}
	}
	assertSound(t, dir)
}

// TestKillDuringAppends kills appends at random moments. Afterwards the ref
// is valid, fsck and verify are clean, and every append that exited 0 is on
// the chain. No kill leaves a lock for a person to clear: git, moving the
// ref in its own process group, reads EOF and rolls its locks back.
func TestKillDuringAppends(t *testing.T) {
	dir := startedRepo(t)
	acked := map[int]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	// Kill anywhere from start-up to just after a typical append ends, so
	// that some appends finish and the rest die at every stage.
	t0 := time.Now()
	gitCrucible(t, dir, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", "1000")
	clock := &killClock{rng: rng, typical: time.Since(t0)}
	const rounds = 40
	killed := 0
	for n := 1; n <= rounds; n++ {
		ok := clock.run(func(after time.Duration) bool {
			_, ok := runOrKill(t, dir, after, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(n))
			return ok
		})
		if ok {
			acked[n] = true
		} else {
			killed++
		}
		assertNoLocks(t, dir)
	}
	t.Logf("%d of %d appends killed (a typical append took %v)", killed, rounds, clock.typical)
	if killed == 0 || killed == rounds {
		t.Fatalf("%d of %d appends killed: the kill points did not spread over the append", killed, rounds)
	}
	onChain, _ := chainRounds(t, dir)
	for n := range acked {
		if !onChain[n] {
			t.Errorf("append %d exited 0 but is not on the chain", n)
		}
	}
	assertSound(t, dir)
	// The pipeline still takes appends.
	gitCrucible(t, dir, "gate", "verdict", "1", "--verdict", "PASS")
	gitCrucible(t, dir, "ledger", "pass", "1")
}

// assertNoLocks fails when a lock file stays under dir's .git: one a
// killed run left for a person to clear; or a half-made shadow (a first
// checkpoint killed while it made the shadow leaves its .init-* directory,
// locks and all, which the next checkpoint removes). A git that outlives
// the kill (its own process group) gets a moment to roll back. flock
// files, which die with their holder, stay: the shadow's crucible.lock,
// verify-commits' lock and the worktree pools' slot locks.
func assertNoLocks(t *testing.T, dir string) {
	t.Helper()
	git := filepath.Join(dir, ".git")
	flocks := []string{filepath.Join(git, "crucible", "shadow", "main", "crucible.lock"), filepath.Join(git, "crucible-verify-commits.lock")}
	pools := []string{filepath.Join(git, "crucible", "worktrees"), filepath.Join(git, "crucible", "gates", "slots")}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left = nil
		filepath.WalkDir(git, func(path string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
			case d.IsDir() && strings.HasPrefix(d.Name(), ".init-"):
				left = append(left, path)
				return filepath.SkipDir
			case strings.HasSuffix(path, ".lock") && !slices.Contains(flocks, path) && !slices.Contains(pools, filepath.Dir(path)):
				left = append(left, path)
			}
			return nil
		})
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("locks or a half-made shadow left behind: %v", left)
		}
	}
}

// killClock picks when to kill a command so that kills spread over its
// run: anywhere from start-up to a little after a typical run ends. It
// learns as rounds go, so that a machine whose load changes mid-test still
// sees runs that finish and runs killed at every stage: a run that finished
// says how long runs take now, and a streak of kills stretches the estimate.
type killClock struct {
	rng     *rand.Rand
	typical time.Duration
	streak  int // kills in a row
}

// run runs one round: try runs the command, killed after the given time
// unless it has finished, and reports whether it finished successfully.
func (k *killClock) run(try func(after time.Duration) bool) bool {
	t0 := time.Now()
	ok := try(time.Duration(k.rng.Int64N(int64(k.typical) * 3 / 2)))
	if ok {
		k.streak = 0
		k.typical = (k.typical + max(k.typical/2, time.Since(t0))) / 2
		return true
	}
	if k.streak++; k.streak >= 3 {
		k.typical = k.typical * 3 / 2
	}
	return false
}

// runOrKill runs git crucible args in dir and kills it, with everything it
// started, after the given time unless it has finished. ok reports a
// successful finish; its stdout is returned.
func runOrKill(t *testing.T, dir string, after time.Duration, args ...string) (stdout string, ok bool) {
	t.Helper()
	return runOrKillProgram(t, dir, after, "git", append([]string{"crucible"}, args...)...)
}

// runOrKillProgram is runOrKill of any program.
func runOrKillProgram(t *testing.T, dir string, after time.Duration, program string, args ...string) (stdout string, ok bool) {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	code := gittest.RunUntil(t, cmd, time.After(after))
	return out.String(), code == 0
}

// TestStaleLockReported: a lock left by a killed writer is reported with
// git's wording and a hint, not waited on forever or silently broken.
func TestStaleLockReported(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the lock timeout")
	}
	dir := startedRepo(t)
	lock := filepath.Join(dir, ".git", "refs", "crucible", "pipelines", testID+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := gitCrucibleErr(dir, "ledger", "fail", "1")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128 {
		t.Fatalf("exit %v, want 128\n%s", err, out)
	}
	want := "fatal: unable to lock " + lock + ": it exists; another git process may be running\n" +
		"hint: if no other git or git-crucible process is running, remove the file: rm " + lock + "\n"
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestGCPruneLosesNothing: git gc --prune=now (refs packed, objects packed,
// unreachable pruned) leaves every pipeline whole, and the cache-less
// fallback reads it.
func TestGCPruneLosesNothing(t *testing.T) {
	dir := startedRepo(t)
	for n := 1; n <= 5; n++ {
		gitCrucible(t, dir, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(n))
	}
	before := gitCrucible(t, dir, "log")
	gittest.Git(t, dir, "gc", "-q", "--prune=now", "--aggressive")
	if err := os.RemoveAll(filepath.Join(dir, ".git", "crucible", "cache")); err != nil {
		t.Fatal(err)
	}
	if loose := gittest.Git(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("gc left loose objects: %s", loose)
	}
	if after := gitCrucible(t, dir, "log"); after != before {
		t.Fatalf("log changed across gc:\n%s\nvs\n%s", before, after)
	}
	assertSound(t, dir)
	gitCrucible(t, dir, "gate", "verdict", "1", "--verdict", "PASS")
	gitCrucible(t, dir, "ledger", "pass", "1")
	assertSound(t, dir)
}

// TestConcurrentDispatchStarts: 8 processes start a dispatch at once; they
// get the 8 distinct seqs 1..8 and the manifest holds all of them.
func TestConcurrentDispatchStarts(t *testing.T) {
	dir := startedRepo(t)
	const procs = 8
	seqs := make(chan string, procs)
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			out, err := gitCrucibleErr(dir, "dispatch", "start", "--role", fmt.Sprintf("agent%d", p), "--phase", "1")
			if err != nil {
				t.Errorf("dispatch start %d: %v\n%s", p, err, out)
			}
			seqs <- strings.TrimSpace(out)
		}(p)
	}
	wg.Wait()
	close(seqs)
	got := map[string]bool{}
	for s := range seqs {
		got[s] = true
	}
	for n := 1; n <= procs; n++ {
		if !got[fmt.Sprint(n)] {
			t.Errorf("no process got seq %d (got %v)", n, got)
		}
	}
	var manifest []struct {
		Seq  int    `json:"seq"`
		Role string `json:"role"`
	}
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "dispatch", "list", "--json")), &manifest); err != nil {
		t.Fatal(err)
	}
	roles := map[string]bool{}
	for i, m := range manifest {
		if m.Seq != i+1 {
			t.Errorf("manifest entry %d has seq %d", i, m.Seq)
		}
		roles[m.Role] = true
	}
	if len(manifest) != procs || len(roles) != procs {
		t.Fatalf("manifest has %d entries from %d roles, want %d", len(manifest), len(roles), procs)
	}
	assertSound(t, dir)
}

// TestConcurrentCheckpoints: two creates at once both succeed, and the
// list holds every checkpoint they printed.
func TestConcurrentCheckpoints(t *testing.T) {
	dir := gittest.Init(t)
	var wg sync.WaitGroup
	ids := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := gitCrucibleErr(dir, "checkpoint", "create", fmt.Sprint("reason-", i))
			if err != nil {
				t.Errorf("create %d: %v\n%s", i, err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			ids <- lines[len(lines)-1]
		}(i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(ids)
	list := gitCrucible(t, dir, "checkpoint", "list")
	for id := range ids {
		if !strings.Contains(list, id) {
			t.Errorf("checkpoint %s was printed but is not listed:\n%s", id, list)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "crucible", "shadow", "main", "index.lock")); err == nil {
		t.Fatal("a lock was left behind")
	}
}

// TestKillDuringCheckpoints kills creates at random moments: every
// checkpoint that was acknowledged stays listed and readable, the shadow
// passes fsck, and the next create works (the flock died with its holder,
// and a stale index.lock of the shadow is cleared under it).
func TestKillDuringCheckpoints(t *testing.T) {
	dir := gittest.Init(t)
	for i := 0; i < 30; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%02d.txt", i)), []byte(strings.Repeat("x", 1000)), 0o644)
	}
	t0 := time.Now()
	gitCrucible(t, dir, "checkpoint", "create", "warm-up")
	clock := &killClock{rng: rand.New(rand.NewPCG(3, 4)), typical: time.Since(t0)}
	acked := map[string]bool{}
	killed := 0
	for n := 0; n < 25; n++ {
		os.WriteFile(filepath.Join(dir, "changing.txt"), []byte(fmt.Sprint(n)), 0o644)
		var out string
		ok := clock.run(func(after time.Duration) (ok bool) {
			out, ok = runOrKill(t, dir, after, "checkpoint", "create", fmt.Sprint("round-", n))
			return ok
		})
		if ok {
			acked[strings.TrimSpace(out)] = true
		} else {
			killed++
		}
	}
	t.Logf("%d of 25 creates killed", killed)
	if killed == 0 || killed == 25 {
		t.Fatalf("%d of 25 creates killed: the kill points did not spread over a create", killed)
	}
	list := gitCrucible(t, dir, "checkpoint", "list")
	for id := range acked {
		if !strings.Contains(list, id) {
			t.Errorf("checkpoint %s was acknowledged but is not listed", id)
		}
		gitCrucible(t, dir, "checkpoint", "show", id)
	}
	shadow := filepath.Join(dir, ".git", "crucible", "shadow", "main")
	gittest.Git(t, dir, "--git-dir="+shadow, "fsck", "--no-dangling")
	os.WriteFile(filepath.Join(dir, "changing.txt"), []byte("after"), 0o644)
	after := gitCrucible(t, dir, "checkpoint", "create", "after-the-kills")
	// Whatever the kills left (records, the shadow's branch, its index), an
	// unchanged tree still gives back exactly the newest checkpoint.
	if again := gitCrucible(t, dir, "checkpoint", "create", "unchanged"); !strings.Contains(again, "Nothing changed") ||
		!strings.HasSuffix(strings.TrimSpace(again), strings.TrimSpace(after)) {
		t.Fatalf("no change after the kills gave %q, want %q", again, after)
	}
	assertNoLocks(t, dir)
}

// TestSyncUnderFire: while one clone appends and another's history is
// being taken in, and while syncs are killed at random moments, nothing
// acknowledged is lost: after a last sync on each side both chains are the
// same, hold every round both clones recorded, and verify.
func TestSyncUnderFire(t *testing.T) {
	a := startedRepo(t)
	server := filepath.Join(t.TempDir(), "server.git")
	gittest.Git(t, a, "init", "-q", "--bare", server)
	gittest.Git(t, a, "remote", "add", "origin", server)
	gitCrucible(t, a, "push")
	b := filepath.Join(t.TempDir(), "b")
	gittest.Git(t, a, "clone", "-q", server, b)
	gitCrucible(t, b, "fetch")
	// b records rounds 101..105 and publishes them.
	for n := 101; n <= 105; n++ {
		gitCrucible(t, b, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(n))
	}
	gitCrucible(t, b, "sync")
	// a appends rounds 1..6 while fetches run beside them and syncs are killed.
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; n <= 6; n++ {
			if out, err := gitCrucibleErr(a, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(n)); err != nil {
				errs <- fmt.Errorf("append %d: %v\n%s", n, err, out)
			}
		}
	}()
	for i := 0; i < 4; i++ {
		runOrKill(t, a, time.Duration(rand.IntN(40))*time.Millisecond, "sync")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	gitCrucible(t, a, "sync")
	gitCrucible(t, b, "sync")
	tipA := gittest.Git(t, a, "rev-parse", "refs/crucible/pipelines/"+testID)
	if tipB := gittest.Git(t, b, "rev-parse", "refs/crucible/pipelines/"+testID); tipA != tipB {
		t.Fatalf("clones did not converge: %s vs %s", tipA, tipB)
	}
	for _, dir := range []string{a, b} {
		rounds := loggedRounds(t, dir)
		for _, n := range []int{1, 2, 3, 4, 5, 6, 101, 102, 103, 104, 105} {
			if !rounds[n] {
				t.Errorf("%s: round %d is missing", dir, n)
			}
		}
		assertSound(t, dir)
	}
}

// loggedRounds returns the --rounds of every verdict dir's log shows, on
// a chain that merges included (whose seqs need not run without a gap).
func loggedRounds(t *testing.T, dir string) map[int]bool {
	t.Helper()
	var events []struct {
		Data struct{ Rounds int } `json:"data"`
	}
	if err := json.Unmarshal([]byte(gitCrucible(t, dir, "log", "--json")), &events); err != nil {
		t.Fatal(err)
	}
	rounds := map[int]bool{}
	for _, e := range events {
		rounds[e.Data.Rounds] = true
	}
	return rounds
}

// TestConcurrentSyncs: 24 syncs from 6 clones race at one file remote
// (those of one clone take turns at fetching and pushing). Each loser of a
// race at the remote starts over, as sync promises: every sync succeeds, and
// after a last round all clones hold every round any of them recorded, on
// one chain that verifies. A failing sync's whole output is kept.
func TestConcurrentSyncs(t *testing.T) {
	a := startedRepo(t)
	server := filepath.Join(t.TempDir(), "server.git")
	gittest.Git(t, a, "init", "-q", "--bare", server)
	gittest.Git(t, a, "remote", "add", "origin", server)
	gitCrucible(t, a, "push")
	const clones, syncsEach = 6, 4
	dirs := []string{a}
	for c := 1; c < clones; c++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("clone", c))
		gittest.Git(t, a, "clone", "-q", server, dir)
		gitCrucible(t, dir, "fetch")
		dirs = append(dirs, dir)
	}
	// Each clone records its own rounds, c*100+1.., before the race.
	for c, dir := range dirs {
		for i := 1; i <= syncsEach; i++ {
			gitCrucible(t, dir, "gate", "verdict", "1", "--verdict", "FAIL", "--rounds", fmt.Sprint(c*100+i))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, clones*syncsEach)
	for _, dir := range dirs {
		for i := 0; i < syncsEach; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out, err := gitCrucibleErr(dir, "sync"); err != nil {
					errs <- fmt.Errorf("sync in %s: %v\n%s", filepath.Base(dir), err, out)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		failed++
		t.Error(err)
	}
	if failed > 0 {
		t.Fatalf("%d of %d concurrent syncs failed", failed, clones*syncsEach)
	}
	for _, dir := range dirs {
		gitCrucible(t, dir, "sync")
	}
	want := gittest.Git(t, a, "rev-parse", "refs/crucible/pipelines/"+testID)
	for _, dir := range dirs {
		gitCrucible(t, dir, "fetch")
		if tip := gittest.Git(t, dir, "rev-parse", "refs/crucible/pipelines/"+testID); tip != want {
			t.Errorf("%s: tip %s, want %s", filepath.Base(dir), tip, want)
		}
		rounds := loggedRounds(t, dir)
		for c := range dirs {
			for i := 1; i <= syncsEach; i++ {
				if !rounds[c*100+i] {
					t.Errorf("%s: round %d is missing", filepath.Base(dir), c*100+i)
				}
			}
		}
		assertSound(t, dir)
	}
}

// TestKillDuringRestores kills git-crucible itself (started as
// git-crucible, not through git, with the git processes it runs) at random
// moments of checkpoint restores that swap every file between two versions.
// No file is ever missing, empty or half written: each holds one version
// whole. A restore after a kill works; if the kill left the index locked,
// the next restore names the lock as a killed restore's, with how to clear it.
func TestKillDuringRestores(t *testing.T) {
	dir := gittest.Init(t)
	const files = 40
	versions := map[string][2]string{}
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("file%02d.txt", i)
		versions[name] = [2]string{strings.Repeat(fmt.Sprint("a", i), 20000), strings.Repeat(fmt.Sprint("bb", i), 3000)}
	}
	write := func(v int) {
		for name, vs := range versions {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(vs[v]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0)
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "v0")
	cp0 := strings.TrimSpace(gitCrucible(t, dir, "checkpoint", "create", "v0"))
	write(1)
	cp1 := strings.TrimSpace(gitCrucible(t, dir, "checkpoint", "create", "v1"))
	check := func(when string) {
		t.Helper()
		for name, vs := range versions {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s: %s: %v", when, name, err)
			}
			if got := string(b); got != vs[0] && got != vs[1] {
				t.Fatalf("%s: %s holds %d bytes that are neither version", when, name, len(got))
			}
		}
	}
	// The locks git reset takes, which a kill of git-crucible with its git
	// may leave.
	locks := []string{filepath.Join(dir, ".git", "index.lock"), filepath.Join(dir, ".git", "HEAD.lock"),
		filepath.Join(dir, ".git", "ORIG_HEAD.lock"), filepath.Join(dir, ".git", "refs", "heads", "main.lock")}
	// A typical restore, timed as the kills will run it: the longer of one
	// each way.
	var typical time.Duration
	for _, cp := range []string{cp1, cp0} {
		t0 := time.Now()
		if out, ok := runOrKillProgram(t, dir, time.Minute, "git-crucible", "checkpoint", "restore", cp, "--yes"); !ok {
			t.Fatalf("restore %s: %s", cp, out)
		}
		typical = max(typical, time.Since(t0))
	}
	clock := &killClock{rng: rand.New(rand.NewPCG(5, 6)), typical: typical}
	const rounds = 30
	killed, staleLocks := 0, 0
	for n := 0; n < rounds; n++ {
		target := []string{cp1, cp0}[n%2]
		ok := clock.run(func(after time.Duration) bool {
			_, ok := runOrKillProgram(t, dir, after, "git-crucible", "checkpoint", "restore", target, "--yes")
			return ok
		})
		if !ok {
			killed++
		}
		check(fmt.Sprint("after restore ", n))
		for _, lock := range locks {
			if _, err := os.Stat(lock); err != nil {
				continue
			}
			staleLocks++
			out, err := gitCrucibleErr(dir, "checkpoint", "restore", target, "--yes")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128 {
				t.Fatalf("restore over a stale %s: exit %v, want 128\n%s", filepath.Base(lock), err, out)
			}
			if !strings.Contains(out, "fatal: unable to lock '"+lock+"': it was left by a checkpoint restore that was killed (git-crucible pid ") ||
				!strings.Contains(out, "hint: if no git process is running, remove it and restore again: rm '"+lock+"'\n") {
				t.Fatalf("restore over a stale %s said:\n%s", filepath.Base(lock), out)
			}
			os.Remove(lock) // the next restore names the next lock left, in the same order
		}
		gitCrucible(t, dir, "checkpoint", "restore", target, "--yes")
		check(fmt.Sprint("after the restore that followed ", n))
		for name, vs := range versions {
			if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != vs[1-n%2] {
				t.Fatalf("round %d: %s is not the version restored", n, name)
			}
		}
	}
	t.Logf("%d of %d restores killed, %d stale locks (a typical restore took %v)", killed, rounds, staleLocks, clock.typical)
	if killed == 0 || killed == rounds {
		t.Fatalf("%d of %d restores killed: the kill points did not spread over a restore", killed, rounds)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the last restore left the tree unlike its checkpoint:\n%s", st)
	}
}
