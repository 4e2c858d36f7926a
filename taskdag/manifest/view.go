package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/git-crucible/git-crucible/internal/fsutil"
)

// ClearState forgets the engine's state a manifest file carries: the
// tasks' statuses and commits, the level boundaries, the backup branch and
// the run's status. A run takes them from its pipeline's chain, the truth
// of which the file is only a view: a file that says otherwise (edited,
// or left by another run) never drives a resume.
func (m *Manifest) ClearState() {
	m.Status, m.BackupBranch = RunPending, ""
	m.LevelBoundaries, m.LevelHeads = nil, nil
	for i := range m.Tasks {
		t := &m.Tasks[i]
		t.Status, t.CommitSHA, t.FixingSource = Pending, "", ""
	}
}

// View keeps a run's YAML manifest file showing the run's state, as the
// seed's dispatch.yaml does: each Write edits the file's YAML nodes (its
// comments and order stay) and replaces it atomically. It never writes
// through a symbolic link, and never over a file changed since the run
// read it (or last wrote it): that file is the user's, and left alone. A
// TOML manifest is never rewritten: no TOML library keeps a file's
// comments and layout on the way back, and the file is the user's first.
type View struct {
	path    string
	want    []byte // what the file must hold to be rewritten
	stopped bool
}

// NewView is the view of the manifest at path, read as data; nil (a view
// that writes nothing) for a TOML manifest.
func NewView(path string, data []byte) *View {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return nil
	}
	v := &View{path: path, want: data}
	// A run killed while it wrote left its temporary file: ours, by its name.
	if fi, err := os.Lstat(v.temp()); err == nil && fi.Mode().IsRegular() {
		os.Remove(v.temp())
	}
	return v
}

// temp is where the view is written before it is renamed over the file:
// one name, so that a kill leaves at most one file, which the next run
// removes.
func (v *View) temp() string {
	return filepath.Join(filepath.Dir(v.path), "."+filepath.Base(v.path)+".crucible-tmp")
}

// ErrViewLeft is why a view stopped rewriting its file.
var ErrViewLeft = errors.New("the run's state is not shown there (git crucible run --json shows it)")

// Write rewrites the file to show m. An error says why the file was left
// alone; the view writes nothing after one, so it is said once.
func (v *View) Write(m *Manifest) error {
	if v == nil || v.stopped {
		return nil
	}
	err := v.write(m)
	if err != nil {
		v.stopped = true
		return fmt.Errorf("%w: %w", err, ErrViewLeft)
	}
	return nil
}

func (v *View) write(m *Manifest) error {
	cur, err := fsutil.ReadRegular(v.path, MaxSize, errors.New("not rewritten"))
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, v.want) {
		return fmt.Errorf("%s: changed since the run read it; left as it is", v.path)
	}
	out, err := RenderView(cur, m)
	if err != nil {
		return fmt.Errorf("%s: %w", v.path, err)
	}
	if bytes.Equal(out, cur) {
		return nil
	}
	fi, err := os.Lstat(v.path)
	if err != nil {
		return err
	}
	if err := v.replace(out, fi.Mode().Perm()); err != nil {
		return err
	}
	v.want = out
	return nil
}

// replace writes out to the temporary file, never through a link, and
// renames it over the manifest.
func (v *View) replace(out []byte, perm os.FileMode) error {
	f, err := os.OpenFile(v.temp(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(out)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(v.temp(), v.path)
	}
	if err != nil {
		os.Remove(v.temp())
	}
	return err
}

// RenderView is the YAML manifest data showing m's state: the run's
// status, backup-branch and level-boundaries, and each task's status,
// commit-sha and fixing-source, set where the file has them and added where it does not
// (before the tasks, and at the end of each task); the rest as it was.
func RenderView(data []byte, m *Manifest) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a YAML mapping")
	}
	root := doc.Content[0]
	setKey(root, "status", plain(string(m.Status)), "tasks")
	if m.BackupBranch != "" {
		setKey(root, "backup-branch", quoted(m.BackupBranch), "tasks")
	}
	if len(m.LevelBoundaries) > 0 {
		setKey(root, "level-boundaries", boundaries(m.LevelBoundaries), "tasks")
	}
	if tasks := value(root, "tasks"); tasks != nil && tasks.Kind == yaml.SequenceNode {
		for _, item := range tasks.Content {
			id := value(item, "id")
			if item.Kind != yaml.MappingNode || id == nil || m.Task(id.Value) == nil {
				continue
			}
			t := m.Task(id.Value)
			setKey(item, "status", plain(string(t.Status)), "")
			if t.CommitSHA != "" || value(item, "commit-sha") != nil {
				setKey(item, "commit-sha", quoted(t.CommitSHA), "")
			}
			if t.FixingSource != "" || value(item, "fixing-source") != nil {
				setKey(item, "fixing-source", plain(t.FixingSource), "")
			}
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if err := shows(b.Bytes(), m); err != nil {
		return nil, fmt.Errorf("yaml.v3 cannot write it back as it was (%w): not rewritten", err)
	}
	return b.Bytes(), nil
}

// shows checks that the view data reads back as a manifest showing m's
// state: yaml.v3 writes a few rare forms back otherwise (a key with no
// value in a flow mapping), and a view must never break the file.
func shows(data []byte, m *Manifest) error {
	back, err := parse("dispatch.yaml", data)
	if err != nil {
		return err
	}
	if back.Status != m.Status || back.BackupBranch != m.BackupBranch || len(back.Tasks) != len(m.Tasks) {
		return errors.New("the run's state reads back otherwise")
	}
	for i, t := range back.Tasks {
		want := m.Task(t.ID)
		if want == nil || m.Tasks[i].ID != t.ID || t.Status != want.Status || t.CommitSHA != want.CommitSHA {
			return fmt.Errorf("task %s reads back otherwise", t.ID)
		}
	}
	return nil
}

// value is mapping n's value at key, nil when it has none.
func value(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// setKey sets mapping n's key to val, keeping the old value's comments;
// a new key goes before the key named before, or at the end.
func setKey(n *yaml.Node, key string, val *yaml.Node, before string) {
	at := len(n.Content)
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case key:
			old := n.Content[i+1]
			val.HeadComment, val.LineComment, val.FootComment = old.HeadComment, old.LineComment, old.FootComment
			n.Content[i+1] = val
			return
		case before:
			at = i
		}
	}
	n.Content = slices.Insert(n.Content, at, plain(key), val)
}

func plain(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// quoted is a string that must stay one: a commit id may be all digits.
func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func boundaries(b map[int]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	levels := make([]int, 0, len(b))
	for l := range b {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	for _, l := range levels {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(l)}, quoted(b[l]))
	}
	return n
}
