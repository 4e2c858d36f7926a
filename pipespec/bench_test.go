package pipespec

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// BenchmarkParseDefault is the whole of Parse on the default spec: TOML
// decoding, the line scan and validation. BenchmarkDecodeDefault, the TOML
// decoding alone, is its floor: compare the two (same run) for what the
// scan and validation add.
func BenchmarkParseDefault(b *testing.B) {
	set := templates(b)
	for b.Loop() {
		if _, err := Parse(defaultTOML, DefaultSource, set); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeDefault(b *testing.B) {
	for b.Loop() {
		var raw map[string]any
		if _, err := toml.Decode(string(defaultTOML), &raw); err != nil {
			b.Fatal(err)
		}
	}
}
