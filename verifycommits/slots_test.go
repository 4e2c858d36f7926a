package verifycommits

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
			var got []int
			var trees []string
			for _, slot := range tc.calls {
				c, i, ok := deal.next(slot)
				if !ok {
					got = append(got, -1)
					continue
				}
				if c.Commit != "c"+strconv.Itoa(i) {
					t.Fatalf("dealt %s as commit %d", c.Commit, i)
				}
				got, trees = append(got, i), append(trees, c.Tree)
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

// TestStretchesCut: after a failure nothing past it is dealt; what comes
// before it still is, whoever's stretch it was in.
func TestStretchesCut(t *testing.T) {
	var todo []Commit
	for i := range 8 {
		todo = append(todo, Commit{Commit: "c" + strconv.Itoa(i), Tree: "t" + strconv.Itoa(i)})
	}
	deal := newStretches(todo, 2)
	var got []int
	take := func(slot int) {
		if _, i, ok := deal.next(slot); ok {
			got = append(got, i)
		} else {
			got = append(got, -1)
		}
	}
	take(0)
	take(1)
	deal.cut(4) // c4 failed
	for _, slot := range []int{1, 0, 0, 1, 0} {
		take(slot)
	}
	deal.cut(6) // a later failure cuts nothing more
	take(1)
	if want := []int{0, 4, 2, 1, 3, -1, -1, -1}; !slices.Equal(got, want) {
		t.Fatalf("dealt %v, want %v", got, want)
	}
}
