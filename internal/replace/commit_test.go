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
