package main

import (
	"slices"
	"strings"
)

// similarCommands are the commands closest to a mistyped name, as git
// suggests them: by edit distance (a swap of two neighbours counting one),
// within a third of the name's length, the closest first; a prefix of one
// command names it too.
func similarCommands(name string, commands []string) []string {
	best, out := -1, []string(nil)
	for _, c := range commands {
		d := editDistance(name, c)
		if strings.HasPrefix(c, name) && len(name) >= 2 {
			d = min(d, 1)
		}
		if d > max(1, len(name)/3) {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent letters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
