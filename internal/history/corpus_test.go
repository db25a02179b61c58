package history

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestUndoCorpus: the trees a real session leaves, each made by a few
// calls and undone after each prefix of them: the last call taken back
// (the tree as before it), that undo taken back (a redo: as after it),
// then every call from the first (as before them all). Each state is
// checked byte for byte, mode for mode and type for type against a
// snapshot taken when it stood, and a file changed outside calls after
// them, by nobody's call, must come through every undo as it was left:
// nothing outside a call's paths may change. A path that cannot be
// taken back must be said not restorable, with why, and be no part of
// what the undo claims.
func TestUndoCorpus(t *testing.T) {
	at := func(dir, name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, dir string)
		calls []func(t *testing.T, dir string)
		// lost are the paths (and what is under them) no undo can give
		// back, each said not restorable by the undo of the call that
		// made or removed them.
		lost []string
	}{
		{name: "a directory replaced by a link, and back",
			files: map[string]string{"cur/app": "cfg\n", "rel/v2/app": "two\n"},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.RemoveAll(at(dir, "cur")))
					must(t, os.Symlink("rel/v2", at(dir, "cur")))
				},
				func(t *testing.T, dir string) {
					must(t, os.Remove(at(dir, "cur")))
					must(t, os.Mkdir(at(dir, "cur"), 0o750))
					must(t, os.WriteFile(at(dir, "cur/app"), []byte("three\n"), 0o600))
				},
			}},
		{name: "a file become a directory, and a file again",
			setup: func(t *testing.T, dir string) {
				must(t, os.WriteFile(at(dir, "f"), []byte("orig\n"), 0o640))
			},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.Remove(at(dir, "f")))
					must(t, os.Mkdir(at(dir, "f"), 0o755))
					must(t, os.WriteFile(at(dir, "f/inner"), []byte("in\n"), 0o644))
				},
				func(t *testing.T, dir string) {
					must(t, os.RemoveAll(at(dir, "f")))
					must(t, os.WriteFile(at(dir, "f"), []byte("back\n"), 0o644))
				},
			}},
		{name: "a mode-only change on a file and on a directory",
			files: map[string]string{"run.sh": "echo\n", "src/a.go": "package a\n"},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.Chmod(at(dir, "run.sh"), 0o755))
					must(t, os.Chmod(at(dir, "src"), 0o711))
				},
				func(t *testing.T, dir string) {
					must(t, os.Chmod(at(dir, "run.sh"), 0o600))
				},
			}},
		{name: "a link rewritten by sed -i",
			files: map[string]string{"target.txt": "one\ntwo\n"},
			setup: func(t *testing.T, dir string) {
				must(t, os.Symlink("target.txt", at(dir, "link.txt")))
			},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					sedI(t, dir, "s/two/TWO/", "link.txt")
				},
			}},
		{name: "__pycache__ made by a command",
			files: map[string]string{"app.py": "print(1)\n"},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.Mkdir(at(dir, "__pycache__"), 0o755))
					must(t, os.WriteFile(at(dir, "__pycache__/app.cpython-312.pyc"), []byte("\x00pyc"), 0o644))
				},
				func(t *testing.T, dir string) {
					must(t, os.WriteFile(at(dir, "app.py"), []byte("print(2)\n"), 0o644))
					must(t, os.WriteFile(at(dir, "__pycache__/app.cpython-312.pyc"), []byte("\x00pyc2"), 0o644))
				},
			},
			lost: []string{"__pycache__"}},
		{name: "a heavy directory made and removed",
			files: map[string]string{"package.json": "{}\n"},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.MkdirAll(at(dir, "node_modules/left-pad"), 0o755))
					must(t, os.WriteFile(at(dir, "node_modules/left-pad/index.js"), []byte("x\n"), 0o644))
					must(t, os.WriteFile(at(dir, "package-lock.json"), []byte("{\"lock\":1}\n"), 0o644))
				},
				func(t *testing.T, dir string) {
					must(t, os.RemoveAll(at(dir, "node_modules")))
				},
			},
			lost: []string{"node_modules"}},
		{name: "a directory of 1,500 files and a 100 MB file",
			files: map[string]string{"a.txt": "a\n"},
			calls: []func(t *testing.T, dir string){
				func(t *testing.T, dir string) {
					must(t, os.Mkdir(at(dir, "dist"), 0o755))
					for i := range 1500 {
						must(t, os.WriteFile(at(dir, fmt.Sprintf("dist/chunk%d.js", i)), []byte("x\n"), 0o644))
					}
					must(t, os.WriteFile(at(dir, "huge.bin"), nil, 0o644))
					must(t, os.Truncate(at(dir, "huge.bin"), 100<<20))
				},
				func(t *testing.T, dir string) {
					must(t, os.WriteFile(at(dir, "a.txt"), []byte("b\n"), 0o644))
				},
			},
			// Their contents not kept, nor hashed: said so, and left
			// (an undo removes huge.bin, which no redo gives back).
			lost: []string{"dist", "huge.bin"}},
	}
	for _, tc := range cases {
		for k := 1; k <= len(tc.calls); k++ {
			t.Run(fmt.Sprintf("%s/after call %d", tc.name, k), func(t *testing.T) {
				files := map[string]string{"bystander.txt": "as it was\n"}
				for name, body := range tc.files {
					files[name] = body
				}
				dir := newTree(t, files)
				if tc.setup != nil {
					call(t, dir, func() { tc.setup(t, dir) })
				}
				snaps := []map[string]string{snapshot(t, dir)}
				var first, last int64
				for i, change := range tc.calls[:k] {
					ch := call(t, dir, func() { change(t, dir) })
					if i == 0 {
						first = ch.Call
					}
					last = ch.Call
					snaps = append(snaps, snapshot(t, dir))
				}
				// Nobody's call: it must come through every undo.
				must(t, os.WriteFile(at(dir, "bystander.txt"), []byte("changed outside calls\n"), 0o600))
				left := func(snap map[string]string) map[string]string {
					out := map[string]string{}
					for p, v := range snap {
						if !lostPath(p, tc.lost) {
							out[p] = v
						}
					}
					out["bystander.txt"] = "600=changed outside calls\n"
					return out
				}
				check := func(what string, want map[string]string, res UndoResult) {
					t.Helper()
					if len(res.Conflicts) > 0 || len(res.Left) > 0 {
						t.Fatalf("%s: conflicts %+v, left %+v", what, res.Conflicts, res.Left)
					}
					for _, st := range res.NotKept {
						if !lostPath(st.Path, tc.lost) || st.Why == "" {
							t.Errorf("%s: %s not restorable (%q)", what, st.Path, st.Why)
						}
					}
					now := snapshot(t, dir)
					if got := left(now); !reflect.DeepEqual(got, left(want)) {
						t.Fatalf("%s:\n%s", what, snapDiff(left(want), got))
					}
					// What it claims restored reads back as it was, lost
					// or not.
					for _, st := range res.Restored {
						if now[st.Path] != want[st.Path] {
							t.Errorf("%s claims %s restored: %q, want %q", what, st.Path, now[st.Path], want[st.Path])
						}
					}
				}
				ctx := context.Background()
				res, undo, err := UndoCalls(ctx, UndoArgs{Call: last}, settings())
				must(t, err)
				check(fmt.Sprintf("the undo of call %d", last), snaps[k-1], res)
				if undo != nil { // nil where it changed nothing: all of it lost
					res, _, err = UndoCalls(ctx, UndoArgs{Call: undo.Call}, settings())
					must(t, err)
					check("the redo", snaps[k], res)
				}
				res, _, err = UndoCalls(ctx, UndoArgs{To: first}, settings())
				must(t, err)
				check(fmt.Sprintf("the undo to call %d", first), snaps[0], res)
				// The next call says the bystander's change, and only that:
				// no undo said it, nor changed it.
				again := call(t, dir, func() {})
				if len(again.Files) > 0 || again.Outside == nil || len(again.Outside.Files) != 1 || again.Outside.Files[0].Path != "bystander.txt" {
					t.Fatalf("the next call said %q, outside %+v", said(again), again.Outside)
				}
			})
		}
	}
}

// lostPath reports whether p is one of lost or under one.
func lostPath(p string, lost []string) bool {
	p = strings.TrimSuffix(p, "/")
	return slices.ContainsFunc(lost, func(l string) bool { return p == l || strings.HasPrefix(p, l+"/") })
}

// sedI runs sed -i as a command does: through a link it writes a file in
// the link's place (GNU sed without --follow-symlinks).
func sedI(t *testing.T, dir, script, name string) {
	t.Helper()
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	cmd := exec.Command("sed", "-i", script, name)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v: %s", err, out)
	}
}

// TestUnhashedUndo: a file too large to hash that a call made is undone
// while its stat is the one the index has (as a scan takes it), and is a
// conflict once it changed since: before a scan saw it, or after one said
// it changed outside calls and took its new stat.
func TestUnhashedUndo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		since    func(t *testing.T, dir string, p string)
		conflict bool
	}{
		{"as the call left it", func(t *testing.T, dir, p string) {}, false},
		{"changed, no scan since", func(t *testing.T, dir, p string) {
			must(t, os.Truncate(p, maxHash+2))
		}, true},
		{"changed, a scan said it", func(t *testing.T, dir, p string) {
			must(t, os.Truncate(p, maxHash+2))
			call(t, dir, func() {})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newTree(t, map[string]string{"a.txt": "a\n"})
			p := filepath.Join(dir, "huge.bin")
			ch := call(t, dir, func() {
				must(t, os.WriteFile(p, nil, 0o644))
				must(t, os.Truncate(p, maxHash+1))
			})
			tc.since(t, dir, p)
			res, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, settings())
			must(t, err)
			_, statErr := os.Lstat(p)
			switch {
			case tc.conflict && (len(res.Conflicts) != 1 || statErr != nil):
				t.Fatalf("want a conflict, huge.bin kept: %+v (%v)", res, statErr)
			case !tc.conflict && (len(res.Conflicts) != 0 || len(res.Restored) != 1 || !os.IsNotExist(statErr)):
				t.Fatalf("want huge.bin removed: %+v (%v)", res, statErr)
			}
		})
	}
}

// TestCallNumbers: a call's number is one past both the seq file's and
// the log's last: a seq a crash took back, or left unreadable, never gives
// a number the log has already.
func TestCallNumbers(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "1\n"})
	ch := call(t, dir, func() {})
	h, err := open(settings())
	must(t, err)
	seq := filepath.Join(h.dir, "seq")
	h.close()
	for _, back := range []string{"1", "garbage", ""} {
		must(t, os.WriteFile(seq, []byte(back), 0o600))
		next := call(t, dir, func() {})
		if next.Call != ch.Call+1 {
			t.Fatalf("seq %q: call %d after call %d", back, next.Call, ch.Call)
		}
		ch = next
	}
}
