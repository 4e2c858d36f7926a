package pipeline

import (
	"strings"
	"testing"
)

func TestDAGEventsChecked(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		data any
		want string
	}{
		{TypeDAGRun, DAGRunData{Status: "running"}, `dag run: invalid status "running"`},
		{TypeDAGTask, DAGTaskData{Task: "../x", Status: "pending"}, `invalid task "../x"`},
		{TypeDAGTask, DAGTaskData{Task: "a", Status: "done"}, `task a: invalid status "done"`},
		{TypeDAGTask, DAGTaskData{Task: "a", Status: "committed"}, "task a: committed without a commit or a reason"},
		{TypeDAGTask, DAGTaskData{Task: "a", Status: "pending", Level: -1}, "task a: negative level or round"},
		{TypeDAGTask, DAGTaskData{Task: "a", Status: "fixing", Round: 1}, "task a: fixing needs its source (critique or verification) and its amendment round"},
		{TypeDAGTask, DAGTaskData{Task: "a", Status: "fixing", Source: "critique"}, "task a: fixing needs its source (critique or verification) and its amendment round"},
		{TypeDAGLevel, DAGLevelData{Level: 0, Boundary: "a", Head: "b"}, "dag level 0: needs a level from 1, a boundary and a head"},
		{TypeDAGLevel, DAGLevelData{Level: 1, Head: "b"}, "dag level 1: needs a level from 1, a boundary and a head"},
	} {
		st := started(t)
		before := st.Seq
		_, err := st.Apply(ev(t, st, tc.typ, tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: got %v, want %q", tc.typ, tc.data, err, tc.want)
		}
		if st.Seq != before {
			t.Errorf("%s: a refused event changed the state", tc.typ)
		}
	}
}

func TestDAGViewRunning(t *testing.T) {
	st := started(t)
	for _, d := range []DAGTaskData{
		{Task: "a", Status: "dispatched", Level: 1, Worktree: "w1"},
		{Task: "b", Status: "dispatched", Level: 1, Worktree: "w2"},
		{Task: "a", Status: "committed", Commit: "c"},
		{Task: "b", Status: "fixing", Level: 1, Source: "critique", Round: 1},
	} {
		if _, err := st.Apply(ev(t, st, TypeDAGTask, d)); err != nil {
			t.Fatal(err)
		}
	}
	v := st.View.DAG
	if len(v.Running) != 1 || v.Running[0].Task != "b" || v.Level != 1 {
		t.Fatalf("running %+v level %d", v.Running, v.Level)
	}
	if c := v.Counts(); c["committed"] != 1 || c["fixing"] != 1 || len(c) != 2 {
		t.Fatalf("counts %v", c)
	}
}
