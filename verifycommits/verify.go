package verifycommits

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-crucible/git-crucible/enforce"
	"github.com/git-crucible/git-crucible/fastgate"
	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/verifycommits/results"
)

// Options is one verify-commits run.
type Options struct {
	Base      string // the range is Base..HEAD; a commit id
	Gate      Gate
	Spec      string // fastgate.Identity(Gate.Command, fingerprint)
	Mode      Mode
	KeepGoing bool // test every commit, not stopping at the first failure
	DryRun    bool // say what would run; run nothing
	Jobs      int  // prefill the cache in this many slot worktrees first (<2: none)
}

// Commit is one commit of the range and its verdict.
type Commit struct {
	Commit  string   `json:"commit"`
	Parents []string `json:"-"`
	Tree    string   `json:"tree"`
	Subject string   `json:"subject"`
	Task    string   `json:"task,omitempty"` // Crucible-Task, or the provenance note's
	Seq     string   `json:"seq,omitempty"`  // Crucible-Seq, likewise
	Status  Status   `json:"status,omitempty"`
	Exit    int      `json:"exit"`
	Cached  bool     `json:"cached"`        // the result came from the cache
	Log     string   `json:"log,omitempty"` // the gate's output, when it ran here or before
	Run     bool     `json:"run,omitempty"` // --dry-run: the gate would run here
}

// Report is a run's outcome, commits parents first, in the order the
// rebase visits them. A commit the run did not reach has no Status.
type Report struct {
	Base     string   `json:"base"`
	Head     string   `json:"head"`
	Gate     string   `json:"gate"`
	Command  string   `json:"command"`
	Spec     string   `json:"spec"`
	Commits  []Commit `json:"commits"`
	Ran      int      `json:"ran"`    // gate runs in the authoritative pass
	Cached   int      `json:"cached"` // results taken from the cache
	DryRun   bool     `json:"dry_run,omitempty"`
	WouldRun int      `json:"would_run,omitempty"` // --dry-run: commits the gate would run at
	// Recovered is the killed run the run put back before it began.
	Recovered *Interrupted `json:"-"`
}

// Failed returns the commits that failed.
func (r *Report) Failed() []Commit {
	var out []Commit
	for _, c := range r.Commits {
		if c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

// Verify runs the gate at every commit of Base..HEAD: commits with a
// result the mode trusts are answered from the cache (after the slots
// filled it, with Jobs), the others by a real git rebase -i over the range
// with an exec line after each of them (see rebase). With every commit
// answered no rebase runs. The branch is left exactly as it was whether
// the gate passes or not. A run killed here before is recovered first.
func (s *Store) Verify(ctx context.Context, o Options) (*Report, error) {
	unlock, in, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep, err := s.verify(ctx, o)
	if rep != nil {
		rep.Recovered = in
	}
	return rep, err
}

// begin takes the worktree's lock for a run and recovers a run that was
// killed here (see Recover), refusing one where a git operation is under
// way.
func (s *Store) begin(ctx context.Context) (unlock func(), in *Interrupted, err error) {
	if unlock, err = lockWorktree(s.repo); err != nil {
		return nil, nil, err
	}
	if m, ok, err := readMarker(s.repo); err != nil {
		unlock()
		return nil, nil, err
	} else if ok {
		if in, err = s.recover(ctx, m); err != nil {
			unlock()
			return nil, nil, fmt.Errorf("a verify-commits run was interrupted in this worktree: %w", err)
		}
	}
	if op := s.repo.Operation(); op != "" {
		unlock()
		return nil, nil, outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("a %s is under way in this worktree", op)},
			"finish it or abort it first (git "+op+" --continue or --abort)")
	}
	return unlock, in, nil
}

// verify is Verify, the worktree locked.
func (s *Store) verify(ctx context.Context, o Options) (*Report, error) {
	head, err := s.repo.HeadCommit()
	if err != nil {
		return nil, err
	}
	rep := &Report{Base: o.Base, Head: head, Gate: o.Gate.Name, Command: o.Gate.Command, Spec: o.Spec, DryRun: o.DryRun}
	if rep.Commits, err = s.commits(ctx, o.Base, head); err != nil {
		return nil, err
	}
	trees := make([]string, len(rep.Commits))
	for i, c := range rep.Commits {
		trees[i] = c.Tree
	}
	if _, err := s.Prime(ctx, o.Spec, trees); err != nil {
		return nil, err
	}
	toRun := 0
	for i := range rep.Commits {
		if ok, err := s.answer(&rep.Commits[i], o); err != nil {
			return nil, err
		} else if !ok {
			toRun++
		}
	}
	if o.DryRun {
		// With slots, every commit not answered is tested, failures or not.
		for i, run := range gated(rep.Commits, o.KeepGoing || o.Jobs > 1) {
			rep.Commits[i].Run = run
		}
		rep.count()
		return rep, nil // writes nothing, not even earlier runs' pending notes
	}
	if toRun == 0 {
		return rep, s.finish(ctx, rep)
	}
	if o.Jobs > 1 {
		// Before the slots spend their time: the rebase would refuse.
		if err := s.checkClean(ctx); err != nil {
			return nil, err
		}
		fresh, err := s.prefill(ctx, o, rep.Commits)
		if err != nil {
			return nil, err
		}
		for i := range rep.Commits {
			if c := &rep.Commits[i]; c.Status == "" && slices.Contains(fresh, c.Tree) {
				if _, err := s.answer(c, Options{Spec: o.Spec, Mode: UseCache}); err != nil {
					return nil, err
				}
				c.Cached = false // tested by this run
			}
		}
	}
	if err := s.rebase(ctx, o, rep, head); err != nil {
		return nil, err
	}
	return rep, s.finish(ctx, rep)
}

// checkClean refuses a work tree with changes to tracked files, which
// the rebase would refuse half-way through set-up.
func (s *Store) checkClean(ctx context.Context) error {
	// In a group of its own: a kill of ours leaves it to release index.lock.
	_ = s.repo.With(gitext.Exec{Dir: s.repo.WorkTree, Group: true}).RefreshIndex(ctx)
	differs, err := s.repo.With(gitext.Exec{Dir: s.repo.WorkTree}).DiffIndexQuiet(ctx, "HEAD", false)
	if differs {
		return outcome.WithHints(&outcome.Refused{Err: errors.New("the work tree has changes to tracked files: the rebase needs it clean")},
			"commit or stash them first")
	}
	return err
}

// answer fills c from the cache when the mode trusts its result.
func (s *Store) answer(c *Commit, o Options) (bool, error) {
	r, ok, err := s.Lookup(c.Tree, o.Spec)
	if err != nil || !ok || !o.Mode.Reuse(r) {
		return false, err
	}
	c.Status, c.Exit, c.Cached = r.Status, r.Exit, true
	if _, err := os.Stat(s.LogPath(c.Tree, o.Spec)); err == nil {
		c.Log = s.LogPath(c.Tree, o.Spec)
	}
	return true, nil
}

// finish counts the verdicts and writes the new results into the notes.
func (s *Store) finish(ctx context.Context, rep *Report) error {
	rep.count()
	_, err := s.Flush(ctx)
	return err
}

// count sets Ran, Cached and WouldRun from the commits' verdicts.
func (rep *Report) count() {
	rep.Ran, rep.Cached, rep.WouldRun = 0, 0, 0
	for _, c := range rep.Commits {
		switch {
		case c.Run:
			rep.WouldRun++
		case c.Status == "":
		case c.Cached:
			rep.Cached++
		default:
			rep.Ran++
		}
	}
}

// commits lists base..head as git rev-list does, in topological order
// (parents first), with what attributes a failure. base must be an
// ancestor of head; the range may hold merges, and commits of the topics
// they merge that do not descend from base: git lists them, so they are
// verified too.
func (s *Store) commits(ctx context.Context, base, head string) ([]Commit, error) {
	if err := s.checkAncestor(ctx, base, head); err != nil {
		return nil, err
	}
	revs, err := s.repo.RevList(ctx, gitext.RevSet{Include: []string{base + ".." + head}}, gitext.ParentsFirst)
	if err != nil || len(revs) == 0 {
		return []Commit{}, err
	}
	objects, err := s.repo.NewObjectReader(ctx)
	if err != nil {
		return nil, err
	}
	defer objects.Close()
	prov, err := notes.NewReader(ctx, s.repo, notes.ProvenanceRef)
	if err != nil {
		return nil, err
	}
	defer prov.Close()
	list := make([]Commit, 0, len(revs))
	for _, rev := range revs {
		data, err := objects.ReadKind(rev.ID, "commit")
		if err != nil {
			return nil, err
		}
		c, err := gitext.DecodeCommit(data)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", rev.ID, err)
		}
		subject, _, _ := strings.Cut(c.Message, "\n")
		item := Commit{Commit: rev.ID, Parents: rev.Parents, Tree: c.Tree, Subject: subject}
		for _, t := range enforce.CrucibleLines(c.Message) {
			switch {
			case strings.EqualFold(t.Key, enforce.TrailerTask):
				item.Task = t.Value
			case strings.EqualFold(t.Key, enforce.TrailerSeq):
				item.Seq = t.Value
			}
		}
		if item.Task == "" && item.Seq == "" {
			note, _, err := prov.Read(ctx, rev.ID)
			if err != nil {
				return nil, err
			}
			if recs, _ := notes.ParseProvenance(note); len(recs) > 0 {
				r := recs[len(recs)-1]
				if r.Task > 0 {
					item.Task = strconv.Itoa(r.Task)
				}
				if r.Seq > 0 {
					item.Seq = strconv.Itoa(r.Seq)
				}
			}
		}
		list = append(list, item)
	}
	return list, nil
}

// checkAncestor refuses a base that head does not descend from: the range
// would not be the commits made on it.
func (s *Store) checkAncestor(ctx context.Context, base, head string) error {
	ok, err := s.repo.IsAncestor(ctx, base, head)
	if err != nil || ok {
		return err
	}
	hints := []string{"git merge-base --is-ancestor " + base + " HEAD says so (exit status 1)"}
	fork, err := s.repo.MergeBase(ctx, base, head)
	if err != nil {
		return err
	}
	if fork != "" {
		hints = append(hints, "verify the commits since HEAD forked from it: git crucible verify-commits "+fork+"..HEAD")
	}
	return outcome.WithHints(&outcome.Refused{Err: fmt.Errorf("%s is not an ancestor of HEAD", base)}, hints...)
}

// pinned is the configuration the rebase runs with, whatever the user's:
// no editor but the one writing our todo list, no autosquash or
// autostash, no other refs moved, no signing.
var pinned = []string{
	"-c", "rebase.autoSquash=false", "-c", "rebase.autoStash=false", "-c", "rebase.updateRefs=false",
	"-c", "rebase.missingCommitsCheck=error", "-c", "rebase.abbreviateCommands=false",
	"-c", "rebase.instructionFormat=", "-c", "rebase.forkPoint=false", "-c", "commit.gpgSign=false",
	"-c", "core.editor=true", "-c", "advice.skippedCherryPicks=false",
}

// rebase is the authoritative pass: git rebase -i over the range with a
// todo list of our own (todoList): every commit picked, or merged, onto its
// own parents, so that each fast-forwards, and after each commit the cache
// could not answer an exec line running the gate. The exec line is plain shell (one
// sh, as git rebase --exec's own), so a gate costs what it costs there:
// it writes the gate's output and exit status into the run's directory,
// which are recorded here once the rebase ends. A failure stops the
// rebase (but with KeepGoing) and is aborted, which puts the branch back.
// Past a failure known already, nothing more runs unless KeepGoing.
func (s *Store) rebase(ctx context.Context, o Options, rep *Report, head string) error {
	if err := os.MkdirAll(filepath.Join(s.dir, "runs"), 0o755); err != nil {
		return err
	}
	run, err := os.MkdirTemp(filepath.Join(s.dir, "runs"), "run-")
	if err != nil {
		return err
	}
	defer s.cleanUp(run)
	// The exec line sources the gate in git's own sh, as rebase --exec
	// runs its command, for no process more: output to <i>.log, and an
	// exit trap (which also sees a gate's exit) appends "<i> <status>" to
	// the results and says whether the rebase goes on. For a recovery to
	// stop the rebase without a signal to its git (endRun), the sh says
	// its pid, lets go of git's lock, and fails once asked to stop,
	// recording nothing then. It stays a sourced script, not
	// fastgate.Command (no process group of its own: the rebase's is the
	// one a recovery stops), but unsets the same variables first.
	stop := "case $s in 0|" + strconv.Itoa(SkipExit) + ") exit 0;; esac; exit 1"
	if o.KeepGoing {
		stop = "exit 0"
	}
	gate := "crucible_run=" + shellQuote(run) + "\n" +
		"echo $$ >\"$crucible_run/pid\"; exec 5<&-\n" +
		"if [ -e \"$crucible_run/stop\" ]; then exit 1; fi\n" +
		"trap 's=$?; if [ -e \"$crucible_run/stop\" ]; then exit 1; fi; echo \"$crucible_commit $s\" >>\"$crucible_run/results\"; " + stop + "' EXIT\n" +
		"exec >\"$crucible_run/$crucible_commit.log\" 2>&1 </dev/null\n" +
		"unset " + strings.Join(fastgate.LocalEnv(), " ") + "\n" +
		o.Gate.Command + "\n"
	if err := os.WriteFile(filepath.Join(run, "gate"), []byte(gate), 0o644); err != nil {
		return err
	}
	execs, runs := make([]string, len(rep.Commits)), 0
	for i, ok := range gated(rep.Commits, o.KeepGoing) {
		if ok {
			execs[i] = fmt.Sprintf("crucible_commit=%d; . %s", i, shellQuote(filepath.Join(run, "gate")))
			runs++
		}
	}
	if runs == 0 {
		return nil // every commit is known: nothing for a rebase to find
	}
	todoFile := filepath.Join(run, "todo")
	if err := os.WriteFile(todoFile, []byte(todoList(o.Base, head, rep.Commits, execs)), 0o644); err != nil {
		return err
	}
	// A kill from here on leaves the rebase wedged: the marker says how
	// verify-commits --abort or --continue recovers it.
	branch, err := s.repo.ReadSymref("HEAD")
	if err != nil {
		return err
	}
	m := marker{Run: run, Head: head, Branch: branch, Base: o.Base, Gate: o.Gate, Spec: o.Spec, Mode: o.Mode, KeepGoing: o.KeepGoing}
	for _, c := range rep.Commits {
		m.Commits = append(m.Commits, Commit{Commit: c.Commit, Tree: c.Tree, Subject: c.Subject, Task: c.Task, Seq: c.Seq})
	}
	if err := m.write(s.repo); err != nil {
		return err
	}
	defer m.release()
	rebaseErr := s.rebaseTodo(ctx, &m, gateRebase, todoFile)
	if err := s.abortRebase(ctx, &m); err != nil {
		return err
	}
	if err := s.collect(run, o.Spec, rep.Commits); err != nil {
		return err
	}
	now, err := s.repo.HeadCommit()
	if err != nil {
		return err
	}
	if now != head {
		return outcome.WithHints(fmt.Errorf("HEAD moved from %s to %s during the rebase", head, now),
			"see what moved it with: git reflog; the branch was at "+head+" (git reset --keep "+head[:12]+" puts it back, keeping your changes)")
	}
	if rebaseErr != nil && len(rep.Failed()) == 0 {
		if err := s.checkClean(ctx); err != nil {
			return err // what git rebase refused
		}
		return fmt.Errorf("git rebase: %w", rebaseErr)
	}
	return ctx.Err()
}

// gated says at which commits the rebase runs the gate: those the cache
// did not answer, and none past a known failure unless keepGoing.
func gated(commits []Commit, keepGoing bool) []bool {
	out := make([]bool, len(commits))
	for i, c := range commits {
		if c.Status == Fail && !keepGoing {
			break
		}
		out[i] = c.Status == ""
	}
	return out
}

// todoList is the rebase's todo list: every commit of the range put back
// onto its own parents, in order, so that git fast-forwards each one
// (pick, or merge -C for a merge) and rewrites none, with an exec line
// running execs[i] after commits[i] when it is not "". A commit whose
// first parent is not the one before it (a topic's first commit, a
// merge's main line after a topic) starts with a reset to that parent:
// ids serve as labels, since no commit changes its id. Such a list ends
// with a check that the rebase is back at head, so that a git that did
// not fast-forward stops there, and is aborted, before the branch moves.
// A line of commits on base is a list of picks alone.
func todoList(base, head string, commits []Commit, execs []string) string {
	var b strings.Builder
	at, line := base, true
	for i, c := range commits {
		switch {
		case len(c.Parents) == 0: // a history of its own, merged
			b.WriteString("reset [new root]\n")
			line = false
		case c.Parents[0] != at:
			fmt.Fprintf(&b, "reset %s\n", c.Parents[0])
			line = false
		}
		if len(c.Parents) > 1 {
			fmt.Fprintf(&b, "merge -C %s %s\n", c.Commit, strings.Join(c.Parents[1:], " "))
			line = false
		} else {
			fmt.Fprintf(&b, "pick %s\n", c.Commit)
		}
		if execs[i] != "" {
			fmt.Fprintf(&b, "exec %s\n", execs[i])
		}
		at = c.Commit
	}
	if !line {
		fmt.Fprintf(&b, "exec test \"$(git rev-parse HEAD)\" = %s\n", head)
	}
	return b.String()
}

// rebaseTodo runs git rebase -i onto m.Base with the list in todoFile as
// its todo list, the user's rebase settings pinned off; extra are more
// git options (-c). kind is gateRebase for a list whose exec lines run the
// run's gate file, else finishGroup.
func (s *Store) rebaseTodo(ctx context.Context, m *marker, kind groupKind, todoFile string, extra ...string) error {
	// The editor git runs on its todo list puts ours in its place, with
	// shell builtins alone (git appends "$@", the list's path).
	editor := `crucible_todo() { while IFS= read -r l; do printf '%s\n' "$l"; done <` + shellQuote(todoFile) + ` >"$1"; }; crucible_todo`
	// In a process group of its own, which an ended ctx asks to stop as a
	// whole: the gate git runs, not git alone, must stop before the
	// rebase is aborted under it; m records it for a recovery to end.
	env := []string{"GIT_SEQUENCE_EDITOR=" + editor, "GIT_EDITOR=true"}
	return s.gitGroup(m, kind, env, append(append([]string{}, pinned...), extra...)...).RebaseInteractive(ctx, m.Base)
}

// collect records the results the exec lines left in run: "i <status>"
// lines for commits[i], its output in i.log; it fills in commits.
func (s *Store) collect(run, spec string, commits []Commit) error {
	b, err := os.ReadFile(filepath.Join(run, "results"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing ran
	}
	if err != nil {
		return err
	}
	now, err := gitext.Now()
	if err != nil {
		return err
	}
	// Only whole lines: a gate killed while its exit trap wrote leaves a
	// torn last one, which says nothing.
	text := string(b)
	var outs []Outcome
	for _, line := range strings.Split(text[:strings.LastIndex(text, "\n")+1], "\n") {
		if line == "" {
			continue
		}
		var i, code int
		if n, err := fmt.Sscanf(line, "%d %d", &i, &code); n != 2 || err != nil || i < 0 || i >= len(commits) || code < 0 || code > 255 {
			return fmt.Errorf("%s: not a result: %q", filepath.Join(run, "results"), line)
		}
		c := &commits[i]
		r := Result{Tree: c.Tree, Spec: spec, Status: results.StatusOf(code), Exit: code, Time: now.UTC().Truncate(time.Second)}
		outs = append(outs, Outcome{Result: r, LogFile: filepath.Join(run, strconv.Itoa(i)+".log")})
		c.Status, c.Exit, c.Cached, c.Log = r.Status, r.Exit, false, s.LogPath(c.Tree, spec)
	}
	return s.Record(outs...)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
