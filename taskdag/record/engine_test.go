package record

import (
	"encoding/json"
	"testing"

	"github.com/git-crucible/git-crucible/internal/repotest"
	"github.com/git-crucible/git-crucible/pipeline"
)

// newEngine is a task engine on a new pipeline of a hermetic repository,
// made the current directory; it dispatches nothing.
func newEngine(t *testing.T) *Engine {
	t.Helper()
	svc := pipeline.Open(repotest.Open(t))
	t.Cleanup(func() { svc.Close() })
	st, _, err := svc.Start(t.Context(), pipeline.StartOptions{Goal: "task run test", Mode: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Service: svc, ID: st.ID}
}

// chain is a task run's events as a test writes them, drafts until
// events makes them the chain's, seqs from 1.
type chain []pipeline.Draft

func (c chain) add(_ *testing.T, typ string, data any) chain {
	return append(c, pipeline.Draft{Type: typ, Data: data})
}

func (c chain) events(t *testing.T) []pipeline.Event {
	t.Helper()
	out := make([]pipeline.Event, len(c))
	for i, d := range c {
		b, err := json.Marshal(d.Data)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = pipeline.Event{Seq: int64(i + 1), Type: d.Type, Data: b}
	}
	return out
}
