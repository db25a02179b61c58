package patch

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"toolkit/internal/outcome"
	"toolkit/testsupport/gittest"
)

// gitCase is one of git's own apply tests, set up with git: a tree, then
// either stages of change (each committed; the patch is their diffs one
// after another, as t4109 and t4127 make it) or a patch given as it is.
type gitCase struct {
	name   string
	files  map[string]string
	modes  map[string]os.FileMode
	stages []string // shell commands, each a commit
	args   []string // git diff's options
	patch  string   // instead of stages
	// refused: toolkit refuses the patch, whatever git apply does (a
	// binary part, which toolkit does not apply).
	refused bool
	// already: git apply refuses a hunk whose change is there already;
	// toolkit says so and changes nothing (a patch tried again after its
	// answer was lost must not add its lines twice).
	already bool
}

var gitCases = []gitCase{
	{name: "t4109 two sections for one file", files: map[string]string{"f": "1\n2\n3\n4\n5\n6\n7\n8\n9\n"},
		stages: []string{"sed -i s/2/two/ f", "sed -i s/8/eight/ f"}},
	{name: "t4127 a section that adds after one that changes", files: map[string]string{"f": "a\nb\nc\n"},
		stages: []string{"sed -i s/b/B/ f", "echo d >> f", "sed -i 1d f"}},
	{name: "t4132 a file left empty", files: map[string]string{"f": "a\nb\n"},
		stages: []string{": > f"}},
	{name: "t4102 a copy keeps its source", files: map[string]string{"a": "1\n2\n3\n4\n5\n6\n7\n"},
		stages: []string{"cp a b && echo 8 >> b"}, args: []string{"-C", "--find-copies-harder"}},
	{name: "t4102 a rename keeps the mode", files: map[string]string{"a": "1\n2\n3\n4\n5\n6\n7\n"}, modes: map[string]os.FileMode{"a": 0o755},
		stages: []string{"git mv a b && echo 8 >> b"}, args: []string{"-M"}},
	{name: "t4102 a mode change alone", files: map[string]string{"a": "1\n"},
		stages: []string{"chmod +x a"}},
	{name: "a mode change alone on a name git quotes", files: map[string]string{"sp ace é.txt": "1\n"},
		stages: []string{"chmod +x 'sp ace é.txt'"}},
	{name: "t4130 a swap", files: map[string]string{"a": "aaa\n1\n2\n3\n4\n", "b": "bbb\n5\n6\n7\n8\n"},
		stages: []string{"mv a t && mv b a && mv t b"}, args: []string{"-M", "-B"}},
	{name: "t4130 a rotation", files: map[string]string{"a": "aaa\n1\n2\n3\n4\n", "b": "bbb\n5\n6\n7\n8\n", "c": "ccc\n9\n10\n11\n12\n"},
		stages: []string{"mv a t && mv c a && mv b c && mv t b"}, args: []string{"-M", "-B"}},
	{name: "t4113 context after only must apply at the start", files: map[string]string{"f": "a\nb\nc\n"},
		patch: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+b\n c\n", already: true},
	{name: "t4113 context before only must apply at the end", files: map[string]string{"f": "a\nb\nc\n"},
		patch: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n", already: true},
	{name: "t4113 context before only, not at the end", files: map[string]string{"f": "a\nb\nx\n"},
		patch: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n"},
	{name: "t4113 context after only, not at the start", files: map[string]string{"f": "x\na\nc\n"},
		patch: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
	{name: "t4113 an addition at the end", files: map[string]string{"f": "a\nb\n"},
		patch: "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n"},
	{name: "t4126 a plain diff of f.orig", files: map[string]string{"f": "a\nb\n"},
		patch: "--- f.orig\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"},
	{name: "t4103 a binary part", files: map[string]string{"f": "a\n", "t": "text\n"},
		stages: []string{"printf 'b\\000\\001' > f && echo more >> t"}, args: []string{"--binary"}, refused: true},
	{name: "t4103 binary files differ", files: map[string]string{"f": "a\n", "t": "text\n"},
		stages: []string{"printf 'b\\000\\001' > f && echo more >> t"}, refused: true},
	{name: "a deleted file and a new one", files: map[string]string{"gone": "x\n", "kept": "k\n"},
		stages: []string{"rm gone && printf 'n\\n' > new && chmod +x new"}},
	{name: "no final line end kept where the patch does not reach it", files: map[string]string{"f": "1\n2\n3\n4\n5\n6\n7\n8\n9"},
		stages: []string{"sed -i s/2/two/ f"}},
	{name: "a final line end taken away", files: map[string]string{"f": "1\n2\n"},
		stages: []string{"printf '1\\n2' > f"}},
}

// TestLikeGitApply: toolkit's result is git apply's, file for file and mode
// for mode, on the cases of git's own apply tests; where git apply refuses,
// toolkit refuses too and changes nothing.
func TestLikeGitApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, c := range gitCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range c.files {
				mode := c.modes[name]
				if mode == 0 {
					mode = 0o644
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
					t.Fatal(err)
				}
			}
			git := func(args ...string) string { t.Helper(); return gittest.Run(t, dir, args...) }
			git("init", "-q", ".")
			git("add", "-A")
			git("commit", "-qm", "base")
			patch := c.patch
			for _, stage := range c.stages {
				sh(t, dir, stage)
				git("add", "-A")
				git("commit", "-qm", stage)
				patch += git(append(append([]string{"diff"}, c.args...), "HEAD~1", "HEAD")...)
			}
			if len(c.stages) > 0 {
				git("checkout", "-q", "HEAD~"+itoa(len(c.stages)))
			}
			before := tree(t, dir)
			mine := filepath.Join(t.TempDir(), "repo")
			sh(t, dir, "cp -a . "+mine)

			cmd := exec.Command("git", "apply", "-")
			cmd.Dir, cmd.Stdin = dir, strings.NewReader(patch)
			gitOut, gitErr := cmd.CombinedOutput()
			o := run(t, mine, patch)
			got := tree(t, mine)
			switch {
			case c.already:
				if gitErr == nil {
					t.Fatalf("git apply applied it: %s", gitOut)
				}
				d, _ := o.Details.(Details)
				if o.Kind != outcome.Done || len(d.Files) != 1 || len(d.Files[0].AlreadyApplied) != 1 || !equal(got, before) {
					t.Fatalf("want the hunk said already applied and nothing changed; got %v %s%s, %q", o.Kind, o.Text, o.Message, got)
				}
			case c.refused || gitErr != nil:
				if o.Kind == outcome.Done {
					t.Fatalf("git apply refused (%v: %s) or the case says toolkit refuses; toolkit applied it:\n%s\n%s", gitErr, gitOut, o.Text, patch)
				}
				if !equal(got, before) {
					t.Fatalf("refused, yet changed: %q, was %q", got, before)
				}
			case o.Kind != outcome.Done:
				t.Fatalf("git apply applied it; toolkit: %s\n%s", o.Message, patch)
			default:
				if want := tree(t, dir); !equal(got, want) {
					t.Fatalf("toolkit made %q\ngit apply made %q\n%s", got, want, patch)
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", script, err, out)
	}
}

// tree is every file under dir but .git: its mode, then its bytes.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = fi.Mode().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
