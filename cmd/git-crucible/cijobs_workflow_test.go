package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/git-crucible/git-crucible/internal/gittest"
)

// TestCIWorkflows parses the workflow examples under docs/ci and runs
// their commands as written, here: the sample DAG to its end, a level per
// run of the workflow (plan, a job per task of the matrix in clones of
// its own, collect, the workflow started again while tasks are left: gh
// and curl are stubs that note it). The steps a user adapts (the
// checkout, installing git-crucible, the agent) are set up by the test.
// The branch ends as the local run of the manifest leaves it.
func TestCIWorkflows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sample DAG through each workflow")
	}
	seed, want := ciProject(t)
	gitCrucible(t, seed, "run", "--max-parallel", "4", sampleDAG)
	local := ciLog(t, seed, pipelineID(t, seed))
	agents := filepath.Join(seed, ".git", "crucible", "agents.toml")
	for _, flavour := range []string{"github", "gitlab"} {
		t.Run(flavour, func(t *testing.T) {
			root := t.TempDir()
			bare := filepath.Join(root, "sample.git")
			gittest.Git(t, root, "init", "-q", "--bare", bare)
			gittest.Git(t, seed, "push", "-q", bare, want+":refs/heads/main")
			// gh and curl start the workflow again: stubs that note it.
			bin := filepath.Join(root, "bin")
			again := filepath.Join(root, "again")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"gh", "curl"} {
				stub := "#!/bin/sh\necho \"" + name + " $*\" >>" + strconv.Quote(again) + "\n"
				if err := os.WriteFile(filepath.Join(bin, name), []byte(stub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
			var w workflow
			if flavour == "github" {
				w = githubWorkflow(t)
			} else {
				w = gitlabWorkflow(t)
			}
			runs := 0
			for {
				if runs++; runs == 5 {
					t.Fatalf("the workflow ran %d times: the sample DAG has 3 levels", runs)
				}
				os.Remove(again)
				coord := ciClone(t, bare, agents)
				tasks := w.plan(t, coord, path)
				if len(tasks) > 0 {
					var wg sync.WaitGroup
					for i, task := range tasks {
						wg.Add(1)
						dir := ciClone(t, bare, agents)
						go func() {
							defer wg.Done()
							w.task(t, dir, path, task, i)
						}()
					}
					wg.Wait()
					w.collect(t, ciClone(t, bare, agents), path)
				}
				if _, err := os.Stat(again); err != nil {
					break
				}
			}
			if runs != 3 {
				t.Errorf("the workflow ran %d times, want 3 (one per level)", runs)
			}
			fresh := ciClone(t, bare, agents)
			gitCrucible(t, fresh, "fetch", "origin")
			id := pipelineID(t, fresh)
			if got := ciLog(t, fresh, id); got != local {
				t.Errorf("the branch:\n%s\nthe local run's:\n%s", got, local)
			}
			if out := gitCrucible(t, fresh, "verify", "--range", want+"..HEAD"); !strings.Contains(out, "6 commit(s) checked, 6 made in pipelines ("+id+"), 0 error(s)") {
				t.Errorf("verify --range: %s", out)
			}
		})
	}
}

// workflow is a CI's three kinds of job, as the test plays them: plan
// returns the matrix's tasks.
type workflow struct {
	plan    func(t *testing.T, dir, path string) []string
	task    func(t *testing.T, dir, path, task string, n int)
	collect func(t *testing.T, dir, path string)
}

// runScript runs script with bash -e in dir, env added, failing the test
// when it fails.
func runScript(t *testing.T, dir, script string, env ...string) {
	t.Helper()
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", script, err, out)
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

type ghStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

type ghJob struct {
	Needs    any                     `yaml:"needs"`
	If       string                  `yaml:"if"`
	Strategy struct{ Matrix string } `yaml:"strategy"`
	Steps    []ghStep                `yaml:"steps"`
}

// githubWorkflow is docs/ci/github-actions.yml played here.
func githubWorkflow(t *testing.T) workflow {
	var w struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]ghJob  `yaml:"jobs"`
	}
	readYAML(t, "github-actions.yml", &w)
	for _, name := range []string{"plan", "task", "collect"} {
		if len(w.Jobs[name].Steps) == 0 {
			t.Fatalf("github-actions.yml: no job %s", name)
		}
	}
	if m := w.Jobs["task"].Strategy.Matrix; m != "${{ fromJSON(needs.plan.outputs.matrix) }}" {
		t.Fatalf("the task job's matrix is %q", m)
	}
	expr := regexp.MustCompile(`\$\{\{\s*([^}]+?)\s*\}\}`)
	values := map[string]string{"inputs.manifest": sampleDAG, "github.run_id": "7", "github.run_attempt": "1",
		"github.token": "token", "github.workflow": "crucible task run", "github.ref_name": "main"}
	subst := func(s string, more map[string]string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string {
			key := expr.FindStringSubmatch(m)[1]
			if v, ok := more[key]; ok {
				return v
			}
			if v, ok := values[key]; ok {
				return v
			}
			t.Fatalf("github-actions.yml: an expression the test does not know: %s", m)
			return ""
		})
	}
	run := func(t *testing.T, job, dir, path string, more map[string]string) string {
		output := filepath.Join(t.TempDir(), "output")
		env := []string{path, "GITHUB_OUTPUT=" + output}
		for k, v := range w.Env {
			env = append(env, k+"="+subst(v, more))
		}
		for _, st := range w.Jobs[job].Steps {
			if st.Uses != "" || strings.HasPrefix(st.Name, "Set up") {
				continue // the checkout, git-crucible and the agent: set up by the test
			}
			if strings.Contains(st.Run, "${{") {
				t.Fatalf("github-actions.yml: step %q has an expression in its script: give it in env", st.Name)
			}
			stepEnv := slicesClone(env)
			for k, v := range st.Env {
				stepEnv = append(stepEnv, k+"="+subst(v, more))
			}
			runScript(t, dir, st.Run, stepEnv...)
		}
		b, _ := os.ReadFile(output)
		return string(b)
	}
	return workflow{
		plan: func(t *testing.T, dir, path string) []string {
			out := run(t, "plan", dir, path, nil)
			line, ok := strings.CutPrefix(strings.TrimSpace(out), "matrix=")
			if !ok {
				t.Fatalf("the plan job's output: %q", out)
			}
			var m struct {
				Task []string `json:"task"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("matrix %q: %v", line, err)
			}
			if skip := w.Jobs["task"].If; len(m.Task) == 0 && !strings.Contains(skip, "!= '"+line+"'") {
				t.Fatalf("the task job's if (%s) does not skip the empty matrix %s", skip, line)
			}
			return m.Task
		},
		task: func(t *testing.T, dir, path, task string, _ int) {
			run(t, "task", dir, path, map[string]string{"matrix.task": task})
		},
		collect: func(t *testing.T, dir, path string) { run(t, "collect", dir, path, nil) },
	}
}

type glJob struct {
	Extends  string   `yaml:"extends"`
	Script   []string `yaml:"script"`
	Parallel struct {
		Matrix []map[string][]string `yaml:"matrix"`
	} `yaml:"parallel"`
}

// gitlabWorkflow is docs/ci/gitlab-ci.yml, with docs/ci/gitlab-task.yml
// for its child pipeline, played here.
func gitlabWorkflow(t *testing.T) workflow {
	var w map[string]yaml.Node
	readYAML(t, "gitlab-ci.yml", &w)
	var variables map[string]string
	job := func(file string, doc map[string]yaml.Node, name string) glJob {
		n, ok := doc[name]
		if !ok {
			t.Fatalf("%s: no job %s", file, name)
		}
		var j glJob
		if err := n.Decode(&j); err != nil {
			t.Fatalf("%s: %s: %v", file, name, err)
		}
		return j
	}
	if n, ok := w["variables"]; !ok || n.Decode(&variables) != nil {
		t.Fatal("gitlab-ci.yml: no variables")
	}
	var child map[string]yaml.Node
	readYAML(t, "gitlab-task.yml", &child)
	plan, collect, task := job("gitlab-ci.yml", w, "plan"), job("gitlab-ci.yml", w, "collect"), job("gitlab-task.yml", child, ".crucible-task")
	ci := []string{"CI_COMMIT_REF_NAME=main", "CI_PIPELINE_ID=7", "CI_PROJECT_ID=1", "CI_JOB_TOKEN=token",
		"CI_API_V4_URL=http://gitlab.invalid/api/v4"}
	run := func(t *testing.T, dir, path string, j glJob, env ...string) {
		env = append(append(slicesClone(ci), path), env...)
		for k, v := range variables {
			env = append(env, k+"="+v)
		}
		runScript(t, dir, strings.Join(j.Script, "\n"), env...)
	}
	return workflow{
		plan: func(t *testing.T, dir, path string) []string {
			run(t, dir, path, plan)
			var jobs map[string]yaml.Node
			b, err := os.ReadFile(filepath.Join(dir, "tasks.yml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &jobs); err != nil {
				t.Fatalf("tasks.yml: %v\n%s", err, b)
			}
			if _, ok := jobs["crucible-none"]; ok {
				return nil
			}
			j := job("tasks.yml", jobs, "crucible-task")
			if j.Extends != ".crucible-task" || len(j.Parallel.Matrix) != 1 {
				t.Fatalf("tasks.yml:\n%s", b)
			}
			return j.Parallel.Matrix[0]["TASK"]
		},
		task: func(t *testing.T, dir, path, name string, n int) {
			run(t, dir, path, task, "TASK="+name, "CI_JOB_ID="+strconv.Itoa(100+n))
		},
		collect: func(t *testing.T, dir, path string) { run(t, dir, path, collect) },
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
