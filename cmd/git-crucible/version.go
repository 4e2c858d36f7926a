package main

import (
	"runtime/debug"
)

// version is this build's version: the module's, when built from a
// released module, else what the build recorded of its checkout (the
// commit, "-dirty" with changes), as `go build` stamps it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += "-" + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "-dirty"
		}
	}
	return v
}
