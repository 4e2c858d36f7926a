package agent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes give a usable layer or a *ConfigError on a line of
// the input; never a panic, and never an agent that breaks the rules.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[agents.a]\nkind = \"command\"\ncommand = [\"x\"]\ntimeout = \"1m\"\n[roles]\ndefault = \"a\"\n"))
	f.Add([]byte("[agents.c]\nkind = \"claude\"\nmodel = \"opus\"\nenv = { A = \"1\" }\n[project]\ntest = \"make\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse("f.toml", data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%T %v is not a *ConfigError", err, err)
			}
			if ce.Line < 0 || ce.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("line %d is not in the input: %v", ce.Line, err)
			}
			return
		}
		for name, a := range l.agents {
			if a.Name != name || a.Timeout <= 0 || checkName("", name) != "" {
				t.Fatalf("agent %q: %+v", name, a)
			}
			if _, msg := a.check(a.Model != "", false); msg != "" {
				t.Fatalf("agent %q passed with %s", name, msg)
			}
		}
		for role, name := range l.roles {
			if checkRole(role, name) != "" {
				t.Fatalf("role %q = %q", role, name)
			}
		}
	})
}

// FuzzReadClients: whatever a client prints, its reader gives an answer
// or a failure that says what it is, never a panic; usage it reports
// names its client.
func FuzzReadClients(f *testing.F) {
	for _, name := range []string{"claude/plain.json", "claude/verbose-array.json", "claude/api-error-400.json", "claude/denied.json", "codex/exec-json.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "clients", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"turn.failed","error":{"message":"401"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := Captured{Head: data}
		for _, read := range []func(Captured) (clientAnswer, *Failure){readClaude, readCodex} {
			a, fail := read(out)
			if fail != nil && (fail.Kind == "" || fail.Error() == "") {
				t.Fatalf("a failure that says nothing: %+v", fail)
			}
			if a.Usage != nil && a.Usage.Client == "" {
				t.Fatalf("usage of no client: %+v", a.Usage)
			}
		}
	})
}
