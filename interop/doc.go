// Package interop is git-crucible's side of the crucible skills' files
// (INTEROP.md): codecs that read and write each format from and to bytes,
// and the moves of a whole pipeline between a chain and a scratch directory
// (Export renders the files the skills read, Import records what they wrote).
// A pipeline's events keep their own types; converting them to and from the
// file formats happens here, so a format change never changes a stored event.
package interop
