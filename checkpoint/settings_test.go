package checkpoint

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "1k": 1024, "2M": 2 << 20, "3g": 3 << 30, " 5 ": 5} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "k", "-1", "1.5m", "ten"} {
		if _, ok := parseSize(bad); ok {
			t.Errorf("parseSize(%q) accepted it", bad)
		}
	}
}
