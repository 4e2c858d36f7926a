package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/ledger"
	"github.com/git-crucible/git-crucible/pipeline"
)

// writeCostTable is what status and metrics show of a pipeline's cost by
// phase, role and task, once some client reported usage: a row each, its
// price (or "no price", or "-" when nothing was reported), its dispatches
// and its tokens, reported and estimated.
func writeCostTable(w io.Writer, c *pipeline.Cost) {
	type row struct{ label, cost, detail string }
	var groups [3][]row
	width := 0
	add := func(g int, label string, l pipeline.CostLine) {
		groups[g] = append(groups[g], row{label, lineCost(l), lineDetail(l)})
		width = max(width, len(label))
	}
	for _, k := range slices.SortedFunc(maps.Keys(c.ByPhase), naturally) {
		label := "phase " + k
		if n, err := strconv.Atoi(k); err == nil && ledger.Phase(n).Valid() {
			label = fmt.Sprintf("%d %s", n, ledger.Phase(n).Name())
		}
		add(0, label, c.ByPhase[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.ByRole)) {
		add(1, k, c.ByRole[k])
	}
	for _, k := range slices.SortedFunc(maps.Keys(c.ByTask), naturally) {
		add(2, k, c.ByTask[k])
	}
	for g, title := range []string{"Cost by phase:", "Cost by role:", "Cost by task:"} {
		if len(groups[g]) == 0 {
			continue
		}
		fmt.Fprintln(w, title)
		for _, r := range groups[g] {
			fmt.Fprintf(w, "  %-*s %9s  %s\n", width, r.label, r.cost, r.detail)
		}
	}
}

// lineCost is a row's price: what its priced dispatches cost.
func lineCost(l pipeline.CostLine) string {
	switch {
	case l.Priced > 0:
		return pipeline.USD(l.CostUSD)
	case l.Reported > 0:
		return "no price"
	}
	return "-"
}

// lineDetail says of a row's dispatches how many were priced, reported
// tokens only or were estimated, then their tokens.
func lineDetail(l pipeline.CostLine) string {
	var kinds []string
	if l.Priced > 0 {
		kinds = append(kinds, fmt.Sprintf("%d priced", l.Priced))
	}
	if n := l.Reported - l.Priced; n > 0 {
		kinds = append(kinds, fmt.Sprintf("%d tokens only", n))
	}
	if l.Estimated > 0 {
		kinds = append(kinds, fmt.Sprintf("%d estimated", l.Estimated))
	}
	return fmt.Sprintf("%s (%s): %s", nDispatches(l.Dispatches), strings.Join(kinds, ", "), l.Tokens())
}

// naturally orders task ids and phases: numbers by value, before the
// others, which go by their text.
func naturally(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(x, y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// nDispatches is "1 dispatch" or "n dispatches".
func nDispatches(n int) string {
	if n == 1 {
		return "1 dispatch"
	}
	return strconv.Itoa(n) + " dispatches"
}
