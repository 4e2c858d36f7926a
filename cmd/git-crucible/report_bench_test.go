package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
	"github.com/git-crucible/git-crucible/runpage"
)

// reportChain records a pipeline of n dispatches through its four phases:
// every tenth a gate round whose kept report has three findings, the
// others an agent's, with a usage on every other one; the ledger's
// phases begin and pass in turn.
func reportChain(b *testing.B, n int) string {
	dir := gittest.Init(b)
	gittest.Git(b, dir, "config", "gc.auto", "0")
	gittest.Chdir(b, dir)
	ctx := context.Background()
	repo, err := gitext.Discover(ctx)
	if err != nil {
		b.Fatal(err)
	}
	svc := pipeline.Open(repo)
	defer svc.Close()
	const id = "bench-report"
	if _, _, err := svc.Start(ctx, pipeline.StartOptions{Goal: "a long pipeline", Mode: "feature", ID: id}); err != nil {
		b.Fatal(err)
	}
	record := func(c *pipeline.Change) {
		if _, _, err := svc.Update(ctx, id, func(*pipeline.State, string) (*pipeline.Change, error) { return c, nil }); err != nil {
			b.Fatal(err)
		}
	}
	phase := ledger.Phase(0)
	c := &pipeline.Change{Files: map[string][]byte{}}
	report := []byte("findings:\n  fatal: []\n  significant:\n    - title: a significant finding\n  minor:\n    - title: one\n    - title: two\n")
	price := 0.01
	for seq := 1; seq <= n; seq++ {
		if p := ledger.Phase(1 + (seq-1)*4/n); p != phase {
			if phase > 0 {
				c.Drafts = append(c.Drafts, pass(id, phase)...)
			}
			phase = p
			c.Drafts = append(c.Drafts, pipeline.Draft{Type: pipeline.LedgerType(ledger.Begin), Data: pipeline.LedgerData{Phase: phase}})
		}
		role, step, round := "implementer", "implement", 0
		task := fmt.Sprint(seq % 40)
		fin := pipeline.DispatchFinish{Seq: seq, Status: "completed", OutputChars: 2000, Summary: "report of 2000 bytes"}
		if seq%10 == 0 {
			role, step, round, task = "red-team", "gate", seq/10%5+1, ""
			fin.Output = pipeline.DispatchPath(seq, role, true)
			c.Files[fin.Output] = report
		}
		if seq%2 == 0 {
			fin.Usage = &pipeline.Usage{Client: "claude", InputTokens: 10000, OutputTokens: 2000, CostUSD: &price}
		}
		c.Drafts = append(c.Drafts,
			pipeline.Draft{Type: pipeline.TypeDispatchStart, Data: pipeline.DispatchStart{Seq: seq, Role: role, Phase: phase, Template: role, Step: step, TaskID: task, Round: round, InputChars: 8000}},
			pipeline.Draft{Type: pipeline.TypeDispatchFinish, Data: fin})
		if len(c.Drafts) >= 100 {
			record(c)
			c = &pipeline.Change{Files: map[string][]byte{}}
		}
	}
	c.Drafts = append(c.Drafts, pass(id, phase)...)
	record(c)
	if _, err := repo.Git(ctx, "gc", "-q"); err != nil {
		b.Fatal(err)
	}
	return id
}

// pass is a gate's verdict and the ledger's pass of phase p (Phase 3
// completes).
func pass(id string, p ledger.Phase) []pipeline.Draft {
	if p == ledger.Execute {
		return []pipeline.Draft{{Type: pipeline.LedgerType(ledger.CompletePhase), Data: pipeline.LedgerData{Phase: p, Done: 1, Total: 1}}}
	}
	return []pipeline.Draft{{Type: pipeline.TypeVerdict, Data: pipeline.VerdictData{Phase: p, Verdict: "PASS", PipelineID: id, Rounds: 5}},
		{Type: pipeline.LedgerType(ledger.PassGate), Data: pipeline.LedgerData{Phase: p}}}
}

// BenchmarkReport1000 makes the report of a 1,000-dispatch pipeline (read
// the chain, build the model, render the page) and does status --json's
// work on the same chain, each from a fresh session as a process would,
// interleaved; it reports both times, their ratio and the sizes.
func BenchmarkReport1000(b *testing.B) {
	id := reportChain(b, 1000)
	ctx := context.Background()
	var report, status time.Duration
	var page, js int
	for b.Loop() {
		t0 := time.Now()
		s, err := openSession(ctx, &bytes.Buffer{}, &bytes.Buffer{}, id, true)
		if err != nil {
			b.Fatal(err)
		}
		m, err := reportModel(ctx, s, id)
		if err != nil {
			b.Fatal(err)
		}
		out, err := runpage.Render(m)
		if err != nil {
			b.Fatal(err)
		}
		s.close()
		t1 := time.Now()
		s, err = openSession(ctx, &bytes.Buffer{}, &bytes.Buffer{}, id, true)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := printStatus(ctx, s, &buf); err != nil {
			b.Fatal(err)
		}
		s.close()
		t2 := time.Now()
		report += t1.Sub(t0)
		status += t2.Sub(t1)
		page, js = len(out), buf.Len()
		if m.Pipeline.Dispatches != 1000 {
			b.Fatalf("%d dispatches", m.Pipeline.Dispatches)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(report.Microseconds())/n/1000, "report-ms")
	b.ReportMetric(float64(status.Microseconds())/n/1000, "status-ms")
	b.ReportMetric(float64(report)/float64(status), "x-status")
	b.ReportMetric(float64(page)/1024, "page-KiB")
	b.ReportMetric(float64(js)/1024, "status-KiB")
}
