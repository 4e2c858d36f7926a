package pipeline

import (
	"testing"
)

// FuzzDecodeEvents feeds arbitrary events.jsonl blobs (a forged chain can
// hold anything) through decoding and replay: no panic, and a refused event
// never changes the state.
func FuzzDecodeEvents(f *testing.F) {
	f.Add([]byte(`{"id":"x","seq":1,"lamport":1,"time":"t","writer":"w","type":"pipeline.start","data":{"id":"p","goal":"g","mode":"feature"}}` + "\n"))
	f.Add([]byte(`{"seq":2,"lamport":2,"type":"ledger.begin","data":{"phase":1}}` + "\n"))
	f.Add([]byte(`{"seq":1,"type":"gate.verdict","data":{"phase":9,"verdict":""}}` + "\n"))
	f.Add([]byte("{}\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := DecodeEvents(data)
		if err != nil {
			return
		}
		st := &State{}
		for _, e := range events {
			before := string(st.Encode())
			if _, err := st.Apply(e); err != nil && string(st.Encode()) != before {
				t.Fatalf("refused event %+v changed the state", e)
			}
		}
	})
}
