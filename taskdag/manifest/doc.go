// Package manifest reads and checks a dispatch manifest, the seed's
// dispatch.yaml (or the same schema in TOML), and answers the scheduling
// questions it poses: the levels of the task graph, the tasks ready to
// run, and why a run can go no further. It does no I/O beyond reading the
// manifest's bytes it is given.
package manifest
