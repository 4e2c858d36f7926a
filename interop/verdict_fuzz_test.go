package interop

import (
	"errors"
	"reflect"
	"testing"
)

func FuzzParseMarker(f *testing.F) {
	f.Add([]byte(v1Marker))
	f.Add([]byte(v2Marker))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMarker(data)
		if err != nil {
			var me *MarkerError
			if !errors.As(err, &me) {
				t.Fatalf("error %T %v, want *MarkerError", err, err)
			}
			if me.Line < 0 {
				t.Fatalf("negative line in %v", err)
			}
			if !reflect.DeepEqual(m, Marker{}) {
				t.Fatalf("non-zero marker with error %v: %#v", err, m)
			}
			return
		}
		out := RenderMarker(m)
		m2, err := ParseMarker(out)
		if err != nil {
			t.Fatalf("ParseMarker(RenderMarker(m)): %v\ninput %q\nrendered %q", err, data, out)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip differs:\n got %#v\nwant %#v\ninput %q\nrendered %q", m2, m, data, out)
		}
		if again := RenderMarker(m2); string(again) != string(out) {
			t.Fatalf("render not stable:\n%q\n%q", out, again)
		}
	})
}
