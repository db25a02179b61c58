package replace

import (
	"os"
	"path/filepath"
	"testing"

	"toolkit/internal/root"
)

// TestCommitLinks: undo's changes put symbolic links back and take them
// away, all or none: a link where a file is, a file where a link is, a
// link retargeted, a link made where nothing is, a link removed. A link
// is never followed: its sha256 is its target's, and what it points to is
// left as it is. Where one change does not find what it expects, none is
// made.
func TestCommitLinks(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	set := func() {
		for _, n := range []string{"file", "retarget", "tofile", "gone", "new"} {
			_ = os.Remove(filepath.Join(dir, n))
		}
		must(t, os.WriteFile(filepath.Join(dir, "t1"), []byte("one"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("plain"), 0o644))
		must(t, os.Symlink("t1", filepath.Join(dir, "retarget")))
		must(t, os.Symlink("t1", filepath.Join(dir, "tofile")))
		must(t, os.Symlink("t1", filepath.Join(dir, "gone")))
	}
	changes := func(expectNew string) []Change {
		return []Change{
			{Path: "file", Target: "file", Content: []byte("t1"), Link: true, Expect: Expect{SHA256: sha("plain")}},
			{Path: "retarget", Target: "retarget", Content: []byte("t2"), Link: true, Expect: Expect{SHA256: sha("t1")}},
			{Path: "tofile", Target: "tofile", Content: []byte("text\n"), Like: Like{Mode: 0o640}, Expect: Expect{SHA256: sha("t1")}},
			{Path: "gone", Target: "gone", Expect: Expect{SHA256: sha("t1")}},
			{Path: "new", Target: "new", Content: []byte("t1"), Link: true, Expect: Expect{Absent: expectNew == ""}},
		}
	}
	set()
	if err := CommitAll(r, changes("")); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}
	if linkTo(dir, "file") != "t1" || linkTo(dir, "retarget") != "t2" || linkTo(dir, "new") != "t1" || linkTo(dir, "gone") != "(none)" {
		t.Fatalf("links: file→%s retarget→%s new→%s gone→%s", linkTo(dir, "file"), linkTo(dir, "retarget"), linkTo(dir, "new"), linkTo(dir, "gone"))
	}
	if fi, err := os.Lstat(filepath.Join(dir, "tofile")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 || read("tofile") != "text\n" {
		t.Fatalf("a link's place did not take the file: %v %v", fi, err)
	}
	if read("t1") != "one" {
		t.Fatal("a link's target was written through it")
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone")); err == nil {
		t.Fatal("a removed link is there")
	}
	// One change that finds what it does not expect (a file where a link
	// is to be made) makes the whole commit none.
	set()
	must(t, os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644))
	if err := CommitAll(r, changes("")); err == nil {
		t.Fatal("a commit whose link's place was taken went through")
	}
	if read("file") != "plain" || linkTo(dir, "retarget") != "t1" || linkTo(dir, "tofile") != "t1" || linkTo(dir, "gone") != "t1" || read("new") != "x" {
		t.Fatalf("a refused commit changed something: file %q retarget→%s tofile→%s gone→%s new %q", read("file"), linkTo(dir, "retarget"), linkTo(dir, "tofile"), linkTo(dir, "gone"), read("new"))
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*toolkit*"))
	if len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommitKinds: a path changes kind, all or none, and nothing is ever
// written through a link: a link where a directory was becomes the
// directory again with its file (the file the link reached is left as it
// is); a directory becomes a file once emptied, and a file a directory; a
// directory's mode is set; a directory the commit was to remove if empty
// is never a file that took its name. A commit that cannot do one of them
// (a directory to take a file's place that holds another file) does none,
// and leaves nothing of its own behind.
func TestCommitKinds(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	at := func(p string) string { return filepath.Join(dir, p) }
	read := func(p string) string {
		b, err := os.ReadFile(at(p))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}
	must(t, os.MkdirAll(at("rel/v2"), 0o755))
	must(t, os.WriteFile(at("rel/v2/app"), []byte("two\n"), 0o644))
	must(t, os.Symlink("rel/v2", at("cur")))
	must(t, os.MkdirAll(at("f"), 0o755))
	must(t, os.WriteFile(at("f/inner"), []byte("in\n"), 0o644))
	must(t, os.WriteFile(at("g"), []byte("back\n"), 0o644))
	must(t, os.MkdirAll(at("src"), 0o755))
	changes := []Change{
		{Path: "cur", Target: "cur", Dir: true, Like: Like{Mode: 0o750}, Expect: Expect{SHA256: sha("rel/v2")}},
		{Path: "cur/app", Target: "cur/app", Content: []byte("cfg\n"), Expect: Expect{Absent: true}},
		{Path: "f/inner", Target: "f/inner", Expect: Expect{SHA256: sha("in\n")}},
		{Path: "f", Target: "f", Content: []byte("orig\n"), Like: Like{Mode: 0o640}, Expect: Expect{Dir: true}},
		{Path: "g", Target: "g", Dir: true, Expect: Expect{SHA256: sha("back\n")}},
		{Path: "g/inner", Target: "g/inner", Content: []byte("in\n"), Expect: Expect{Absent: true}},
		{Path: "src", Target: "src", Dir: true, Like: Like{Mode: 0o711}},
		{Path: "f", Target: "f", RemoveDir: true},
	}
	before := map[string]string{"rel/v2/app": "two\n", "f/inner": "in\n", "g": "back\n", "cur/app": "two\n"}
	for p, want := range before {
		if got := read(p); got != want {
			t.Fatalf("set up: %s is %q", p, got)
		}
	}
	// Refused: a file the commit does not know of is in f.
	must(t, os.WriteFile(at("f/other"), []byte("x"), 0o644))
	if err := CommitAll(r, changes); err == nil {
		t.Fatal("a directory holding another file was replaced")
	}
	for p, want := range before {
		if got := read(p); got != want {
			t.Fatalf("a refused commit changed %s: %q", p, got)
		}
	}
	if linkTo(dir, "cur") != "rel/v2" {
		t.Fatalf("a refused commit changed the link: %s", linkTo(dir, "cur"))
	}
	if left, _ := filepath.Glob(at("*/.*toolkit*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	must(t, os.Remove(at("f/other")))
	if err := CommitAll(r, changes); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(at("cur"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 || read("cur/app") != "cfg\n" || read("rel/v2/app") != "two\n" {
		t.Fatalf("cur: %v %v, cur/app %q, rel/v2/app %q", fi, err, read("cur/app"), read("rel/v2/app"))
	}
	fi, err = os.Lstat(at("f"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 || read("f") != "orig\n" {
		t.Fatalf("f: %v %v %q", fi, err, read("f"))
	}
	fi, err = os.Lstat(at("g"))
	if err != nil || !fi.IsDir() || read("g/inner") != "in\n" {
		t.Fatalf("g: %v %v %q", fi, err, read("g/inner"))
	}
	if fi, err = os.Lstat(at("src")); err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("src: %v %v", fi, err)
	}
	for _, p := range []string{".", "cur", "g"} {
		if left, _ := filepath.Glob(filepath.Join(at(p), ".*toolkit*")); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	}
}
