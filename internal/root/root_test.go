package root

import (
	"errors"
	"os"
	"path/filepath"
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
