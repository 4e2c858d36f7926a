package enforce

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/notes"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/refs"
)

// Finding levels.
const (
	LevelError   = "error"
	LevelWarning = "warning"
)

// Finding is one thing an audit has to say, about a commit or (Commit "")
// about a pipeline as a whole.
type Finding struct {
	Commit   string `json:"commit,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Pipeline string `json:"pipeline,omitempty"`
	Level    string `json:"level"`
	Message  string `json:"message"`
}

// String is the finding as one line: "<level>: <commit> <subject>: <message>",
// the commit abbreviated, or "<level>: pipeline <id>: <message>".
func (f Finding) String() string {
	where := "pipeline " + f.Pipeline
	if f.Commit != "" {
		where = f.Commit[:min(12, len(f.Commit))] + " " + f.Subject
	}
	return f.Level + ": " + where + ": " + f.Message
}

// Rules choose what an audit requires beyond "made while its phase was
// allowed, in a sound pipeline".
type Rules struct {
	// Blocked refuses pipelines that are blocked now: a FAIL or INFERRED
	// phase, an unacknowledged skip, an open merge conflict (pre-push).
	Blocked bool
	// Complete requires Phase 4 PASS (protected branches).
	Complete bool
	// Verified requires every pushed commit's tree to have passed the
	// last gate run on it (git crucible verify-commits): pre-push only.
	Verified bool
}

// RulesNamed returns the rules named commits (every commit's: "" too), push
// (a pushed branch's) or protected (a protected branch's).
func RulesNamed(name string) (Rules, error) {
	switch name {
	case "", "commits":
		return Rules{}, nil
	case "push":
		return Rules{Blocked: true}, nil
	case "protected":
		return Rules{Blocked: true, Complete: true}, nil
	}
	return Rules{}, fmt.Errorf("no rules named %q", name)
}

// Report is an audit's result.
type Report struct {
	Commits   int       `json:"commits"`   // commits examined
	Crucible  int       `json:"crucible"`  // of which made inside a pipeline
	Pipelines []string  `json:"pipelines"` // referenced, in order of first sight
	Findings  []Finding `json:"findings"`
}

// Errors counts the findings that fail the audit.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Level == LevelError {
			n++
		}
	}
	return n
}

// Auditor checks commits against the pipelines that made them. It caches
// what it learns of each pipeline across audits.
type Auditor struct {
	svc    *pipeline.Service
	sound  map[string]string          // pipeline -> "" when it verifies, else why not
	chains map[string]map[string]bool // pipeline -> its chain's commits
}

// NewAuditor returns an auditor over svc's repository.
func NewAuditor(svc *pipeline.Service) *Auditor {
	return &Auditor{svc: svc, sound: map[string]string{}, chains: map[string]map[string]bool{}}
}

// commitInfo is what the audit reads of one commit.
type commitInfo struct {
	oid, subject string
	trailers     []Trailer
	note         string
}

// Audit checks the commits of revs (e.g. "A..B", or a new tip without the
// old one's, or without those on origin's remote-tracking branches).
func (a *Auditor) Audit(ctx context.Context, revs gitext.RevSet, rules Rules) (*Report, error) {
	commits, err := a.commits(ctx, revs)
	if err != nil {
		return nil, err
	}
	report := &Report{Commits: len(commits), Pipelines: []string{}, Findings: []Finding{}}
	seen := map[string]bool{}
	for _, c := range commits {
		pipelines := a.checkCommit(ctx, c, report)
		if len(pipelines) > 0 {
			report.Crucible++
		}
		for _, id := range pipelines {
			if !seen[id] {
				seen[id] = true
				report.Pipelines = append(report.Pipelines, id)
			}
		}
	}
	for _, id := range report.Pipelines {
		if a.soundness(ctx, id) != "" {
			continue // already reported on its commits
		}
		a.checkPipeline(ctx, id, rules, report)
	}
	return report, nil
}

// commits reads what the audit needs of each commit of revs. The list
// comes from rev-list (ids only) and each message from the object itself:
// no text a committer wrote can shift one record into another.
func (a *Auditor) commits(ctx context.Context, revs gitext.RevSet) ([]commitInfo, error) {
	oids, err := a.svc.Repo.RevListIDs(ctx, revs, gitext.NewestFirst)
	if err != nil {
		return nil, err
	}
	if len(oids) == 0 {
		return nil, nil
	}
	objects, err := a.svc.Store.Objects(ctx)
	if err != nil {
		return nil, err
	}
	noteReader, err := notes.NewReader(ctx, a.svc.Repo, notes.ProvenanceRef)
	if err != nil {
		return nil, err
	}
	defer noteReader.Close()
	list := make([]commitInfo, 0, len(oids))
	for _, oid := range oids {
		data, err := objects.ReadKind(oid, "commit")
		if err != nil {
			return nil, err
		}
		note, _, err := noteReader.Read(ctx, oid)
		if err != nil {
			return nil, err
		}
		c, err := decodeCommit(oid, data, note)
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, nil
}

// decodeCommit reads what the audit needs of a commit object and its
// provenance note: bytes that came from whoever pushed them.
func decodeCommit(oid string, data, note []byte) (commitInfo, error) {
	c, err := gitext.DecodeCommit(data)
	if err != nil {
		return commitInfo{}, fmt.Errorf("commit %s: %w", oid, err)
	}
	subject, _, _ := strings.Cut(c.Message, "\n")
	return commitInfo{oid: oid, subject: subject, trailers: CrucibleLines(c.Message), note: string(note)}, nil
}

// named returns the pipelines a commit names, each once (its trailers',
// then its provenance records'), the ids its trailers name, its records,
// and what in its note could not be read.
func (c commitInfo) named() (ids, trailerIDs []string, records []notes.Provenance, noteErrs []error) {
	for _, t := range c.trailers {
		if strings.EqualFold(t.Key, TrailerPipeline) {
			trailerIDs = append(trailerIDs, t.Value)
		}
	}
	records, noteErrs = notes.ParseProvenance([]byte(c.note))
	seen := map[string]bool{}
	for _, id := range trailerIDs {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, r := range records {
		if !seen[r.Pipeline] {
			seen[r.Pipeline] = true
			ids = append(ids, r.Pipeline)
		}
	}
	return ids, trailerIDs, records, noteErrs
}

// CrucibleLines returns every "Crucible-*: value" line of a message, in its
// trailer block or not: a commit that names a pipeline anywhere is audited
// as one made in it (failing closed on odd layouts).
func CrucibleLines(msg string) []Trailer {
	var out []Trailer
	for _, line := range strings.Split(msg, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.HasPrefix(strings.ToLower(k), "crucible-") && isTrailer(line) {
			out = append(out, Trailer{Key: k, Value: strings.TrimSpace(v)})
		}
	}
	return out
}

// checkCommit reports on one commit and returns the pipelines it names.
func (a *Auditor) checkCommit(ctx context.Context, c commitInfo, report *Report) []string {
	add := func(level, id, format string, args ...any) {
		report.Findings = append(report.Findings, Finding{Commit: c.oid, Subject: c.subject, Pipeline: id, Level: level, Message: fmt.Sprintf(format, args...)})
	}
	ids, trailerIDs, records, errs := c.named()
	for _, err := range errs {
		add(LevelWarning, "", "provenance note: %v", err)
	}
	noted := map[string]bool{}
	for _, r := range records {
		noted[r.Pipeline] = true
	}
	for _, id := range ids {
		if why := a.soundness(ctx, id); why != "" {
			add(LevelError, id, "%s", why)
			continue
		}
		if !noted[id] {
			add(LevelError, id, "no provenance note, so nothing shows its phase was allowed (notes not fetched? try: git crucible fetch)")
		}
		if len(trailerIDs) == 0 {
			add(LevelWarning, id, "no Crucible-* trailers: committed with --no-verify or without the commit-msg hook")
		}
	}
	for _, r := range records {
		if a.soundness(ctx, r.Pipeline) != "" {
			continue
		}
		if why := a.allowedAt(ctx, r); why != "" {
			add(LevelError, r.Pipeline, "%s", why)
		}
	}
	return ids
}

// soundness is "" when pipeline id is present and verifies, else why not.
func (a *Auditor) soundness(ctx context.Context, id string) string {
	if why, ok := a.sound[id]; ok {
		return why
	}
	why := ""
	if err := refs.ValidateID(id); err != nil {
		why = fmt.Sprintf("names pipeline %q, which is not a pipeline id", id)
	} else if problems, err := a.svc.VerifyKnown(ctx, id); errors.Is(err, refs.ErrNoPipeline) {
		why = fmt.Sprintf("pipeline %s is not in this repository (its history travels with: git crucible push, git crucible fetch)", id)
	} else if err != nil {
		why = fmt.Sprintf("pipeline %s cannot be read here: %v", id, err)
	} else if len(problems) > 0 {
		why = fmt.Sprintf("pipeline %s fails verification: %s", id, problems[0])
	}
	a.sound[id] = why
	return why
}

// allowedAt is "" when the record's ledger head is on its pipeline's chain
// and, there, the phase it names was allowed to go on.
func (a *Auditor) allowedAt(ctx context.Context, r notes.Provenance) string {
	chain, err := a.chain(ctx, r.Pipeline)
	if err != nil {
		return err.Error()
	}
	if !chain[r.LedgerHead] {
		return fmt.Sprintf("its provenance names ledger head %q, which is not on pipeline %s's chain", r.LedgerHead, r.Pipeline)
	}
	objects, err := a.svc.Store.Objects(ctx)
	if err != nil {
		return err.Error()
	}
	state, err := objects.ReadKind(r.LedgerHead+":"+refs.StateFile, "blob")
	if err != nil {
		return err.Error()
	}
	g, err := pipeline.GatesOf(state)
	if err != nil {
		return err.Error()
	}
	if phase := g.Ledger.Current(); int(phase) != r.Phase {
		return fmt.Sprintf("its provenance says Phase %d, but the pipeline was in Phase %d", r.Phase, phase)
	}
	if _, refusal := g.Check(r.Pipeline, 0); refusal != nil {
		first, _, _ := strings.Cut(refusal.Error(), "\n")
		return fmt.Sprintf("made while Phase %d was not allowed: %s", r.Phase, strings.TrimPrefix(first, "PHASE GATE BLOCKED: "))
	}
	return ""
}

func (a *Auditor) chain(ctx context.Context, id string) (map[string]bool, error) {
	if c, ok := a.chains[id]; ok {
		return c, nil
	}
	c := map[string]bool{}
	err := a.svc.Store.Walk(ctx, id, func(cc *refs.ChainCommit) (bool, error) {
		c[cc.OID] = true
		return true, nil
	})
	a.chains[id] = c
	return c, err
}

// checkPipeline applies the rules about a pipeline's present state.
func (a *Auditor) checkPipeline(ctx context.Context, id string, rules Rules, report *Report) {
	add := func(format string, args ...any) {
		report.Findings = append(report.Findings, Finding{Pipeline: id, Level: LevelError, Message: fmt.Sprintf(format, args...)})
	}
	if !rules.Blocked && !rules.Complete {
		return
	}
	g, err := a.svc.LoadGates(ctx, id)
	if err != nil {
		add("%v", err)
		return
	}
	if rules.Blocked {
		if len(g.Conflicts) > 0 {
			add("has an open merge conflict: %s", g.Conflicts[0])
		}
		for p := ledger.Design; p <= ledger.Completion; p++ {
			e := g.Ledger.Entry(p)
			switch {
			case e.Status == ledger.Fail || e.Status == ledger.Inferred:
				add("Phase %d is %s", p, e.Status)
			case e.Status == ledger.Skipped && !e.Acknowledged:
				add("Phase %d was skipped and the skip is not acknowledged", p)
			}
		}
	}
	if rules.Complete {
		if e := g.Ledger.Entry(ledger.Completion); e.Status != ledger.Pass {
			add("has not passed Phase 4 (it is %s); this branch takes only completed pipelines", e.Status)
		}
	}
}
