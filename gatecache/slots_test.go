package gatecache

import (
	"slices"
	"strconv"
	"testing"
)

// TestStretches: each slot takes a contiguous stretch of the range in
// order; one done with its own takes the second half of the longest left.
func TestStretches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		commits int
		slots   int
		calls   []int // the slot asking, in turn
		want    []int // the commit each call gets; -1: none left
	}{
		{"one slot: in order", 3, 1, []int{0, 0, 0, 0}, []int{0, 1, 2, -1}},
		{"two slots: two stretches", 6, 2, []int{0, 1, 0, 1, 0, 1, 0, 1}, []int{0, 3, 1, 4, 2, 5, -1, -1}},
		{"odd: the second stretch is longer", 5, 2, []int{0, 1, 0, 1, 1}, []int{0, 2, 1, 3, 4}},
		{"a slot done takes the second half of the longest", 8, 2, []int{0, 1, 1, 1, 1, 1, 0, 0, 1, 0},
			[]int{0, 4, 5, 6, 7, 2, 1, 3, -1, -1}},
		{"a last commit left is taken", 4, 2, []int{0, 0, 0, 1, 1}, []int{0, 1, 3, 2, -1}},
		{"more slots than commits", 2, 3, []int{0, 1, 2, 0}, []int{0, 1, -1, -1}},
		{"none to test", 0, 2, []int{0, 1}, []int{-1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var todo []Commit
			for i := range tc.commits {
				todo = append(todo, Commit{Commit: "c" + strconv.Itoa(i), Tree: "t" + strconv.Itoa(i)})
			}
			deal := newStretches(todo, tc.slots)
			var got, dealt []int
			var trees []string
			for _, slot := range tc.calls {
				c, ok := deal.next(slot)
				if !ok {
					got = append(got, -1)
					continue
				}
				i, _ := strconv.Atoi(c.Commit[1:])
				got, dealt, trees = append(got, i), append(dealt, i), append(trees, c.Tree)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("dealt %v, want %v", got, tc.want)
			}
			if !slices.Equal(deal.dealt, trees) {
				t.Fatalf("dealt trees %v, want %v", deal.dealt, trees)
			}
		})
	}
}
