package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-crucible/git-crucible/runpage"
)

// reportCheck is the scenarios' command
//
//	reportcheck PAGE MODEL METRICS [rounds=N] [tasks=N] [edges=N]
//
// checking a report page against the model it was made from (report
// --json) and against metrics --json of the same pipeline: every section,
// one bar per dispatch, one point per gate round (N of them), the cost
// totals equal to metrics', nothing that runs or loads.
func reportCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! reportcheck")
	}
	if len(args) < 3 {
		ts.Fatalf("usage: reportcheck PAGE MODEL METRICS [rounds=N] [tasks=N] [edges=N]")
	}
	page := ts.ReadFile(args[0])
	var m runpage.Model
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &m); err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	var metrics struct {
		Cost map[string]any `json:"cost"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[2])), &metrics); err != nil {
		ts.Fatalf("%s: %v", args[2], err)
	}
	for _, id := range runpage.Sections {
		if !strings.Contains(page, `<section id="`+id+`">`) {
			ts.Fatalf("the page has no section %q", id)
		}
	}
	dispatches := int(metrics.Cost["dispatches"].(float64))
	if n := strings.Count(page, `<rect class="bar `); n != dispatches || m.Pipeline.Dispatches != dispatches || len(m.Timeline.Bars) != dispatches {
		ts.Fatalf("%d bars on the page, %d dispatches in the model, %d in metrics", n, m.Pipeline.Dispatches, dispatches)
	}
	rounds := 0
	for _, l := range m.Gates.Loops {
		rounds += len(l.Rounds)
	}
	if n := strings.Count(page, `<circle class="pt"`); n != rounds {
		ts.Fatalf("%d points on the page, %d rounds in the model", n, rounds)
	}
	// The totals, field by field, as metrics --json has them.
	total, _ := json.Marshal(m.Cost.Total)
	var got map[string]any
	json.Unmarshal(total, &got)
	for k, v := range got {
		if fmt.Sprint(metrics.Cost[k]) != fmt.Sprint(v) {
			ts.Fatalf("cost %s: the report says %v, metrics %v", k, v, metrics.Cost[k])
		}
	}
	for _, kv := range args[3:] {
		k, v, _ := strings.Cut(kv, "=")
		want, err := strconv.Atoi(v)
		if err != nil {
			ts.Fatalf("bad %q", kv)
		}
		have := map[string]int{"rounds": rounds, "tasks": len(m.Tasks.Tasks), "edges": len(m.Tasks.Edges)}[k]
		if have != want {
			ts.Fatalf("%d %s, want %d", have, k, want)
		}
	}
	for _, bad := range []string{`(?i)<script`, `(?i)<[a-z][^<>]*\s(src|on[a-z]+)=`, `(?i)<link`, `(?i)url\(`, `(?i)href="(https?:|//)`} {
		if loc := regexp.MustCompile(bad).FindStringIndex(page); loc != nil {
			ts.Fatalf("the page has %s: %q", bad, page[max(loc[0]-60, 0):min(loc[1]+60, len(page))])
		}
	}
	if !strings.Contains(page, `content="`+strings.ReplaceAll(runpage.CSP, "'", "&#39;")+`"`) {
		ts.Fatalf("the page has no CSP")
	}
	fmt.Fprintf(ts.Stdout(), "%d bars, %d points, %d tasks, %d edges\n", dispatches, rounds, len(m.Tasks.Tasks), len(m.Tasks.Edges))
}
