package replace

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecover: a journal whose commit runs (its lock held) is left alone;
// once its toolkit is gone, its file is put back from the old content kept
// beside it, a new file it made is removed only if it is what it wrote, its
// temporary name is removed, and the journal with them; with the .done mark,
// the old contents are let go instead, and the directories it was to remove
// go, the deepest first, if they are empty (never one that is not).
func TestRecover(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}
	for _, done := range []bool{false, true} {
		write("a.txt", "new a")
		write(".a.txt.toolkit-1.old", "old a")
		write(".a.txt.toolkit-1.tmp", "half")
		write("n.txt", "made")
		write("other.txt", "someone else's") // a new file since: not the commit's content
		for _, d := range []string{"made/deep", "full"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write("full/f", "x")
		_ = os.Remove(filepath.Join(dir, "made.lnk"))
		if err := os.Symlink("t", filepath.Join(dir, "made.lnk")); err != nil {
			t.Fatal(err)
		}
		steps := []JournalStep{
			{Dir: dir, Name: "made.lnk", NewSHA256: sha("t")}, // a link the commit made: its target's sha256
			{Dir: dir, Name: "a.txt", Backup: ".a.txt.toolkit-1.old", Temp: ".a.txt.toolkit-1.tmp"},
			{Dir: dir, Name: "n.txt", NewSHA256: sha("made")},
			{Dir: dir, Name: "other.txt", NewSHA256: sha("what the commit wrote")},
			{Dir: filepath.Join(dir, "made"), Name: "deep", RemoveDir: true},
			{Dir: dir, Name: "made", RemoveDir: true},
			{Dir: dir, Name: "full", RemoveDir: true},
		}
		j, err := BeginJournal(steps)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			if err := j.MarkDone(); err != nil {
				t.Fatal(err)
			}
		}
		if said := Recover(nil); len(said) != 0 {
			t.Fatalf("a running commit was recovered: %v", said)
		}
		j.f.Close() // its toolkit is gone, its journal left
		said := Recover(nil)
		if len(said) != 1 {
			t.Fatalf("done=%v: said %v", done, said)
		}
		switch {
		case !done && (!strings.Contains(said[0], "undone") || read("a.txt") != "old a" || read("n.txt") != "(none)"):
			t.Fatalf("not undone: %v, a.txt %q, n.txt %q", said, read("a.txt"), read("n.txt"))
		case !done && linkTo(dir, "made.lnk") != "(none)":
			t.Fatal("a link the commit made was left")
		case done && linkTo(dir, "made.lnk") != "t":
			t.Fatal("a finished commit's link was removed")
		case done && (!strings.Contains(said[0], "finished") || read("a.txt") != "new a" || read("n.txt") != "made"):
			t.Fatalf("not finished: %v, a.txt %q, n.txt %q", said, read("a.txt"), read("n.txt"))
		}
		if read("other.txt") != "someone else's" {
			t.Fatal("a file the commit did not write was removed")
		}
		if _, err := os.Stat(filepath.Join(dir, "made")); done == (err == nil) {
			t.Fatalf("done=%v: the directory made is there: %v", done, err == nil)
		}
		if read("full/f") != "x" {
			t.Fatal("a directory that was not empty went")
		}
		_ = os.RemoveAll(filepath.Join(dir, "made"))
		left, _ := filepath.Glob(filepath.Join(dir, ".*toolkit*"))
		journals, _ := filepath.Glob(filepath.Join(os.Getenv("TOOLKIT_STATE"), "journals", "*"))
		if len(left) > 0 || len(journals) > 0 {
			t.Fatalf("left behind: %v %v", left, journals)
		}
	}
}

// linkTo is the target of the link name in dir, "(none)" when it is not a
// link.
func linkTo(dir, name string) string {
	dest, err := os.Readlink(filepath.Join(dir, name))
	if err != nil {
		return "(none)"
	}
	return dest
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestRecoverKinds: a commit killed after it changed a path's kind is put
// back: the directory it made goes (empty once its file is taken back),
// the directory it removed is made again with its mode and gets back the
// file kept above it, a directory's mode is set back. Finished instead,
// the file kept above the directory it removed is let go.
func TestRecoverKinds(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	for _, done := range []bool{false, true} {
		dir := t.TempDir()
		at := func(p string) string { return filepath.Join(dir, p) }
		// What the commit did, in its order: f/inner kept above f (as
		// .inner.old), f removed, d made, d/new written, src's mode set.
		must(t, os.WriteFile(at(".inner.old"), []byte("in\n"), 0o644))
		must(t, os.MkdirAll(at("d"), 0o755))
		must(t, os.WriteFile(at("d/new"), []byte("new\n"), 0o644))
		must(t, os.MkdirAll(at("src"), 0o711))
		must(t, os.Chmod(at("src"), 0o711))
		steps := []JournalStep{
			{Dir: at("f"), Name: "inner", Backup: ".inner.old", BackupDir: dir},
			{Dir: dir, Name: "f", RmDir: true, Mode: 0o750},
			{Dir: dir, Name: "d", MakeDir: true},
			{Dir: at("d"), Name: "new", NewSHA256: sha("new\n")},
			{Dir: dir, Name: "src", SetMode: true, Mode: 0o755},
		}
		j, err := BeginJournal(steps)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			must(t, j.MarkDone())
		}
		j.f.Close()
		if said := Recover(nil); len(said) != 1 {
			t.Fatalf("done=%v: said %v", done, said)
		}
		fi, ferr := os.Stat(at("f"))
		_, derr := os.Stat(at("d"))
		src, _ := os.Stat(at("src"))
		b, _ := os.ReadFile(at("f/inner"))
		_, kept := os.Stat(at(".inner.old"))
		switch {
		case !done && (ferr != nil || fi.Mode().Perm() != 0o750 || string(b) != "in\n"):
			t.Fatalf("f not put back: %v %v %q", fi, ferr, b)
		case !done && derr == nil:
			t.Fatal("the directory made is still there")
		case !done && src.Mode().Perm() != 0o755:
			t.Fatalf("src's mode: %v", src.Mode())
		case done && (ferr == nil || derr != nil || src.Mode().Perm() != 0o711):
			t.Fatalf("a finished commit was changed: f %v, d %v, src %v", ferr, derr, src.Mode())
		case kept == nil:
			t.Fatal("the old content is left above the directory")
		}
	}
}
