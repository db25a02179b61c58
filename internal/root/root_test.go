package root

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRel(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for in, want := range map[string]string{
		"a/b":               "a/b",
		"":                  ".",
		r.Dir():             ".",
		r.Dir() + "/x/y":    "x/y",
		r.Dir() + "/x/../y": "y",
		"../x":              "../x", // left to os.Root, which refuses it
	} {
		got, err := r.Rel(in)
		if err != nil || got != want {
			t.Errorf("Rel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/etc/passwd", filepath.Dir(r.Dir()), r.Dir() + "-sibling/x", r.Dir() + "/../x"} {
		if _, err := r.Rel(in); !errors.Is(err, ErrOutside) {
			t.Errorf("Rel(%q) = %v, want ErrOutside", in, err)
		}
	}
}

// TestOutsideWording: os.Root's own refusal, and a missing path that climbs
// out, are both ErrOutside.
func TestOutsideWording(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{"../x", "a/../../x", "nope/../../x"} {
		if _, err := r.Stat(p); !errors.Is(err, ErrOutside) {
			t.Errorf("Stat(%q) = %v, want ErrOutside", p, err)
		}
	}
	if _, err := r.Stat("nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(nope) = %v", err)
	}
}

// TestNilRoot: no root confines nothing.
func TestNilRoot(t *testing.T) {
	var r *Root
	p := filepath.Join(t.TempDir(), "f")
	f, err := r.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := r.Stat(p); err != nil {
		t.Fatal(err)
	}
	if hp, _ := r.HostPath(p); hp != p {
		t.Fatalf("HostPath = %q", hp)
	}
}

// TestResolve: links are followed from where they really are, component by
// component; what does not exist is kept; a link out is refused under a
// root, and followed without one.
func TestResolve(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"sub/deeper", "out"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"d":                 "sub/deeper",
		"sub/deeper/link":   "../x",
		"sub/deeper/chain":  "link",
		"sub/deeper/up":     "../../..",
		"sub/deeper/loop":   "loop",
		"sub/deeper/absout": filepath.Join(base, "out"),
		"abs":               filepath.Join(base, "sub"),
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for in, want := range map[string]string{
		"d/link":         "sub/x",
		"d/chain":        "sub/x",
		"d/new/file":     "sub/deeper/new/file",
		"d/../x":         "sub/x", // .. of the real directory, as the kernel has it
		"sub/./deeper":   "sub/deeper",
		"d/link/../y":    "sub/y", // sub/x does not exist: the rest is taken as written, cleaned
		base + "/d/link": "sub/x",
		"":               ".",
	} {
		if got, err := r.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"d/up", "d/absout/f", "abs/f", "../x", "d/nope/../../../../x"} {
		if _, err := r.Resolve(in); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", in, err)
		}
	}
	if _, err := r.Resolve("d/loop"); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("Resolve(d/loop) = %v, want ELOOP", err)
	}
	var free *Root
	if got, err := free.Resolve(filepath.Join(base, "d/absout/f")); err != nil || got != filepath.Join(base, "out/f") {
		t.Errorf("without a root, Resolve through an absolute link = %q, %v", got, err)
	}
}

// TestGivenThroughALink: a root given as a link takes absolute paths
// spelled with the link as well as with the real directory.
func TestGivenThroughALink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "volume")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "work")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for in, want := range map[string]string{link: ".", link + "/a/b": "a/b", real + "/c": "c"} {
		if got, err := r.Rel(in); err != nil || got != want {
			t.Errorf("Rel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := r.Rel(base + "/other"); !errors.Is(err, ErrOutside) {
		t.Errorf("Rel of a sibling = %v", err)
	}
}

func TestExpand(t *testing.T) {
	t.Setenv("HOME", "/home/model")
	for in, want := range map[string]string{"~": "/home/model", "~/notes.txt": "/home/model/notes.txt", "~user/x": "~user/x", "a/~": "a/~", "/~": "/~"} {
		if got := Expand(in); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWithin: a path is within a directory when it is the directory or
// under it, never when it merely starts with the same letters.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a/b", "/a/", true},
		{"/x/y", "/", true}, {"/a", "/a/b", false}, {"a/b", "a", true},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}
