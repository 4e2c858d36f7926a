package gitext

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

func TestParseConfig(t *testing.T) {
	keys := []string{"gc.auto", "maintenance.auto"}
	for _, tc := range []struct {
		text string
		want map[string]configValue // nil: not read, git is asked
	}{
		{"", map[string]configValue{}},
		{"[core]\n\tbare = false\n[user]\n\tname = \"A \\\"B\\\"\"\n", map[string]configValue{}},
		{"[gc]\n\tauto = 0\n", map[string]configValue{"gc.auto": {value: "0"}}},
		{"[GC]\n\tAuto=5k ; why\n[Maintenance] AUTO\n", map[string]configValue{"gc.auto": {value: "5k"}, "maintenance.auto": {noValue: true}}},
		{"[gc]\r\n\tauto = 7\r\n", map[string]configValue{"gc.auto": {value: "7"}}},
		{"\ufeff[gc]auto = 1 # first\n[gc] auto = 2\n", map[string]configValue{"gc.auto": {value: "2"}}},
		{"[gc]\nauto =\n", map[string]configValue{"gc.auto": {value: ""}}},
		{"[gc \"refs/remotes/*\"]\n\tauto = 1\n\treflogExpire = never\n", map[string]configValue{}},
		{"[gc \"a\\\"]b\"]\n\tauto = 1\n", map[string]configValue{}},
		{"[gc.sub]\n\tauto = 1\n", map[string]configValue{}},
		{"[maintenance \"gc\"]\n\tenabled = true\n[gc]\n\tpruneExpire = now\n", map[string]configValue{}},
		{"# [gc] auto = 1\n; [gc]\n", map[string]configValue{}},
		{"[gc]\n\tauto = \"1\"\n", nil},
		{"[gc]\n\tauto = 1\\\n0\n", nil},
		{"[alias]\n\tx = !echo \\\n[gc]\n", nil},
		{"[include]\n\tpath = other\n", nil},
		{"[includeIf \"gitdir:~/x/\"]\n\tpath = other\n", nil},
		{"auto = 1\n", nil},
		{"[gc\n\tauto = 1\n", nil},
		{"[gc \"x]\n", nil},
		{"[gc]\n\tauto 1\n", nil},
		{"[gc]\n\t1auto = 1\n", nil},
	} {
		vals := map[string]configValue{}
		ok := parseConfig(tc.text, keys, vals)
		if tc.want == nil {
			if ok {
				t.Errorf("%q: read as %v, want git asked", tc.text, vals)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(vals, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.text, vals, ok, tc.want)
		}
	}
}

func TestParseConfigNumbers(t *testing.T) {
	for v, want := range map[configValue]int64{
		{value: "0"}: 0, {value: "6700"}: 6700, {value: "-1"}: -1, {value: "3k"}: 3 << 10, {value: "2M"}: 2 << 20, {value: "1g"}: 1 << 30,
	} {
		if got, ok := parseConfigInt(v); !ok || got != want {
			t.Errorf("%+v: %d, %v; want %d", v, got, ok, want)
		}
	}
	for _, v := range []configValue{{noValue: true}, {value: ""}, {value: "010"}, {value: "0x10"}, {value: "1.5"}, {value: "k"}, {value: "12q"}, {value: "9999999999g"}} {
		if got, ok := parseConfigInt(v); ok {
			t.Errorf("%+v: read as %d, want git asked", v, got)
		}
	}
	for v, want := range map[configValue]bool{
		{noValue: true}: true, {value: "true"}: true, {value: "Yes"}: true, {value: "on"}: true, {value: "1"}: true,
		{value: "false"}: false, {value: "NO"}: false, {value: "off"}: false, {value: "0"}: false, {value: ""}: false,
	} {
		if got, ok := parseConfigBool(v); !ok || got != want {
			t.Errorf("%+v: %v, %v; want %v", v, got, ok, want)
		}
	}
	if _, ok := parseConfigBool(configValue{value: "2"}); ok {
		t.Error("2 read as a boolean, want git asked")
	}
}

// TestGCConfigAsGit: whenever the config is read in process, it reads what
// git reads, across the global and the local file; git -c, an include and
// anything odd are left to git.
func TestGCConfigAsGit(t *testing.T) {
	r, dir := openRepo(t)
	ctx := context.Background()
	global := os.Getenv("GIT_CONFIG_GLOBAL")
	for _, tc := range []struct {
		global, local string
		inProcess     bool
	}{
		{"", "", true},
		{"[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n", "", true},
		{"[gc]\n\tauto = 0\n", "[GC]\n\tAUTO = 2k\n", true},
		{"[maintenance]\n\tauto = false\n", "[maintenance]\n\tauto\n", true},
		{"", "[gc]\n\tauto = -1 ; off\n[gc \"x\"]\n\tauto = 5\n[gc.y]\n\tauto = 6\n", true},
		{"[gc]\r\n\tauto = 12\r\n", "[gc] auto = 13\n", true},
		{"", "[gc]\n\tauto = 010\n", false},
		{"[include]\n\tpath = " + filepath.Join(dir, "extra") + "\n", "", false},
	} {
		if err := os.WriteFile(global, []byte(gittest.GitConfig+tc.global), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"+tc.local), 0o644); err != nil {
			t.Fatal(err)
		}
		on, limit, ok := r.gcConfigInProcess()
		if ok != tc.inProcess {
			t.Errorf("global %q, local %q: read in process %v, want %v", tc.global, tc.local, ok, tc.inProcess)
			continue
		}
		gitOn, gitLimit, gitOK := r.gcConfigFromGit(ctx)
		if ok && (!gitOK || on != gitOn || gitOn && limit != gitLimit) {
			t.Errorf("global %q, local %q: in process %v %d, git %v %d (%v)", tc.global, tc.local, on, limit, gitOn, gitLimit, gitOK)
		}
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", "'gc.auto'='1'")
	if _, _, ok := r.gcConfigInProcess(); ok {
		t.Error("git -c gc.auto=1 read in process")
	}
}

// TestAutoGCStartsNoGit: a config that sets gc.auto (as the benchmarks'
// global one does) costs an append no git process.
func TestAutoGCStartsNoGit(t *testing.T) {
	r, dir := openRepo(t)
	gittest.FillSample(t, dir, 2)
	gittest.Git(t, dir, "config", "--global", "gc.auto", "0")
	bin := t.TempDir()
	ran := filepath.Join(bin, "ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\ntouch "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if r.AutoGC(context.Background(), &GCConfig{}) {
		t.Error("ran git gc with gc.auto=0")
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("started git to read gc.auto")
	}
}
