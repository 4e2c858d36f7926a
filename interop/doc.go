// Package interop reads and writes the files of the crucible skills (INTEROP.md).
// It does no I/O: callers pass bytes.
package interop
