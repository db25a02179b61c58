package root

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenDirect: a directory is opened through real directories only; a
// link on the way, even one that stays inside the root (which os.Root
// follows), and a file on the way are ErrNotDirect; a missing one is
// fs.ErrNotExist.
func TestOpenDirect(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"rel/v2", "a/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("rel/v2", filepath.Join(dir, "cur")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Stat("cur/."); err != nil {
		t.Fatalf("os.Root follows the link inside the root: %v", err)
	}
	for _, root := range []*Root{r, nil} {
		name := func(p string) string {
			if root == nil {
				return filepath.Join(dir, p)
			}
			return p
		}
		for p, want := range map[string]error{
			".": nil, "a": nil, "a/b": nil, "rel/v2": nil,
			"cur": ErrNotDirect, "cur/x": ErrNotDirect, "f": ErrNotDirect, "f/x": ErrNotDirect, "a/../a": nil,
			"nope": fs.ErrNotExist, "a/nope/b": fs.ErrNotExist,
		} {
			if root == nil && p == "." {
				continue
			}
			f, err := root.OpenDirect(name(p))
			if f != nil {
				f.Close()
			}
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				t.Errorf("root %v: OpenDirect(%q) = %v, want %v", root != nil, p, err, want)
			}
		}
	}
}
