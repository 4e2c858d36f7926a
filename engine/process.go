package engine

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/git-crucible/git-crucible/gitext"
)

// procStat is what /proc/PID/stat says of a process: its state and start
// time; ok is false when it is gone (or there is no /proc).
func procStat(pid int) (state, start string, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}
	// pid (comm) state ppid pgrp ... starttime is the 20th field after comm, which ends at the last ')'.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 20 {
		return "", "", false
	}
	return fields[0], fields[19], true
}

// running reports whether a process runs: a zombie has ended.
func running(state string) bool { return state != "Z" && state != "X" }

// newOwner is the owner record of process pid, which runs now.
func newOwner(pid int) ownerRecord {
	_, start, _ := procStat(pid)
	return ownerRecord{PID: pid, Start: start, Boot: gitext.BootID()}
}

// alive reports whether the process o names still runs: same boot, same
// start time (not a process that got its pid since), not a zombie.
func (o ownerRecord) alive() bool {
	if o.PID <= 0 || o.Boot != gitext.BootID() {
		return false
	}
	state, start, ok := procStat(o.PID)
	return ok && start == o.Start && running(state)
}

// agentProcesses are the running processes that carry dispatch seq of
// pipeline id, working in workdir, in their environment: its agent and
// whatever that started. They find an agent that started in the moment
// before its owner record was written. Processes of other users are not
// readable, nor ours.
func agentProcesses(id string, seq int, workdir string) []int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pipelineVar := []byte("\x00CRUCIBLE_PIPELINE=" + id + "\x00")
	seqVar := []byte("\x00CRUCIBLE_SEQ=" + strconv.Itoa(seq) + "\x00")
	workdirVar := []byte("\x00CRUCIBLE_WORKDIR=" + workdir + "\x00")
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + p.Name() + "/environ")
		if err != nil {
			continue
		}
		env = append(append([]byte{0}, env...), 0) // every variable between NULs, the first too
		if !bytes.Contains(env, pipelineVar) || !bytes.Contains(env, seqVar) || !bytes.Contains(env, workdirVar) {
			continue
		}
		if state, _, ok := procStat(pid); ok && running(state) {
			out = append(out, pid)
		}
	}
	return out
}
