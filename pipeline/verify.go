package pipeline

import (
	"bytes"
	"fmt"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/refs"
)

// Problem is one thing wrong with a chain, and where it is.
type Problem struct {
	Pipeline string `json:"pipeline"`
	Commit   string `json:"commit,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Message  string `json:"message"`
}

func (p Problem) String() string {
	where := p.Pipeline
	if p.Commit != "" {
		where += " " + p.Commit[:min(12, len(p.Commit))]
	}
	if p.Seq != 0 {
		where += fmt.Sprintf(" seq %d", p.Seq)
	}
	return where + ": " + p.Message
}

// chainFiles are all the entries a chain commit may have at its top level.
var chainFiles = map[string]bool{
	refs.FormatFile: true, refs.EventsFile: true, refs.StateFile: true, HeaderFile: true, LedgerFile: true,
	dispatchDir: true, handoffsDir: true, importDir: true,
}

// Directories: prompts and outputs (DispatchPath), handoffs (HandoffPath).
const dispatchDir, handoffsDir, importDir = "dispatch", "handoffs", "import"

// Verify replays pipeline id's chain from its root and reports every
// structural fault, illegal transition and state that its events do not
// produce. No problems means every transition on the chain was legal.
func (s *Service) Verify(id string) ([]Problem, error) {
	var chain []*refs.ChainCommit
	if err := s.Store.Walk(id, func(c *refs.ChainCommit) (bool, error) {
		chain = append(chain, c)
		return true, nil
	}); err != nil {
		return nil, err
	}
	var problems []Problem
	report := func(commit string, seq int64, format string, args ...any) {
		problems = append(problems, Problem{Pipeline: id, Commit: commit, Seq: seq, Message: fmt.Sprintf(format, args...)})
	}
	st := &State{}
	var header string // pipeline.toml blob of the root, which no commit may change
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		root := i == len(chain)-1
		if n := len(c.Commit.Parents); root && n != 0 || !root && n != 1 {
			report(c.OID, 0, "has %d parents; a chain is linear", n)
		}
		files := map[string]gitext.TreeEntry{}
		for _, e := range c.Entries {
			files[e.Name] = e
			if !chainFiles[e.Name] {
				report(c.OID, 0, "unexpected entry %q in the tree", e.Name)
			}
		}
		read := func(name string) []byte {
			e, ok := files[name]
			if !ok {
				report(c.OID, 0, "missing %s", name)
				return nil
			}
			b, err := s.Store.ReadFile(c.Entries, e.Name)
			if err != nil {
				report(c.OID, 0, "cannot read %s: %v", name, err)
			}
			return b
		}
		if f := read(refs.FormatFile); f != nil && string(f) != refs.FormatV1 {
			report(c.OID, 0, "unknown format %q", bytes.TrimSpace(f))
			return problems, nil // nothing further can be trusted to mean what this version thinks
		}
		if e, ok := files[HeaderFile]; ok {
			if root {
				header = e.OID
			} else if e.OID != header {
				report(c.OID, 0, "%s changed after the pipeline started", HeaderFile)
			}
		}
		events, err := DecodeEvents(read(refs.EventsFile))
		if err != nil {
			report(c.OID, 0, "%s: %v", refs.EventsFile, err)
		}
		if len(events) == 0 && err == nil {
			report(c.OID, 0, "records no events")
		}
		for _, e := range events {
			if err := e.checkID(); err != nil {
				report(c.OID, e.Seq, "%v", err)
			}
			if e.Writer == "" {
				report(c.OID, e.Seq, "event has no writer")
			}
			if _, err := st.Apply(e); err != nil {
				report(c.OID, e.Seq, "illegal %s: %v", e.Type, err)
			}
		}
		if st.Seq == 0 {
			continue // nothing valid to compare against yet
		}
		if st.ID != id {
			report(c.OID, 0, "chain of %s records pipeline %q", id, st.ID)
		}
		if b := read(refs.StateFile); b != nil && !bytes.Equal(b, st.Encode()) {
			report(c.OID, 0, "%s does not match what the events produce", refs.StateFile)
		}
		if b := read(LedgerFile); b != nil && !bytes.Equal(b, ledger.Render(&st.Gates.Ledger)) {
			report(c.OID, 0, "%s does not match what the events produce", LedgerFile)
		}
	}
	return problems, nil
}
