package main

import (
	"slices"
	"testing"
)

func TestSimilarCommands(t *testing.T) {
	commands := []string{"status", "start", "verify", "verify-commits", "log", "list", "ledger", "run", "replay", "sync", "push"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"stauts", []string{"status"}},  // a swap
		{"statu", []string{"status"}},   // a prefix
		{"verfy", []string{"verify"}},   // a letter dropped
		{"lgo", []string{"log"}},        // a swap in a short name
		{"lis", []string{"list"}},       // a prefix
		{"frobnicate", nil},             // nothing near
		{"x", nil},                      // too short to be anything
		{"verify-commit", []string{"verify-commits"}},
		{"rnu", []string{"run"}},
	} {
		if got := similarCommands(c.name, commands); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.name, got, c.want)
		}
	}
}
