package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/testsupport/gittest"
)

func run(t *testing.T, dir, patch string) outcome.Outcome {
	t.Helper()
	r, err := root.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return Run(context.Background(), Args{Patch: patch, Host: Options{Root: r}})
}

// TestRollback: a file that changes after the patch read it fails the
// patch at its rename, and the files already renamed in are put back as
// they were, a deleted one restored.
func TestRollback(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.txt": "one\ntwo\n", "gone.txt": "bye\n", "b.txt": "three\nfour\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** Update File: b.txt\n@@\n-four\n+FOUR\n*** End Patch\n"
	replace.TestHookRename = func(path string) {
		if filepath.Base(path) == "b.txt" {
			if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("three\nfour\nfive\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { replace.TestHookRename = nil }()
	o := run(t, dir, patch)
	if o.Kind != outcome.ToolError || !strings.Contains(o.Message, "b.txt: changed since it was read") {
		t.Fatalf("got %v %q", o.Kind, o.Message)
	}
	files["b.txt"] = "three\nfour\nfive\n" // the other writer's, kept
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q as before", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("new.txt was left behind")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestOracle: patch applies every diff git diff makes between two random
// revisions of a few files (changed, added, deleted, with and without a
// last line end, CRLF, with lines that repeat), and its result is the second
// revision, which is also what git apply makes.
func TestOracle(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range rounds {
		dir := t.TempDir()
		git := func(args ...string) string {
			t.Helper()
			return gittest.Run(t, dir, args...)
		}
		git("init", "-q", ".")
		before := map[string]string{}
		for i := range 1 + rng.IntN(3) {
			body := randomText(rng, 1+rng.IntN(60))
			if rng.IntN(5) == 0 {
				body = strings.ReplaceAll(body, "\n", "\r\n")
			}
			before[fmt.Sprintf("f%d.txt", i)] = body
		}
		after := map[string]string{}
		for name, body := range before {
			switch rng.IntN(8) {
			case 0: // deleted
			case 1:
				after[name] = body // unchanged
			default:
				after[name] = mutate(rng, body)
			}
		}
		if rng.IntN(3) == 0 {
			after["added.txt"] = randomText(rng, 1+rng.IntN(10))
		}
		writeAll(t, dir, before)
		git("add", "-A")
		git("commit", "-qm", "before", "--allow-empty")
		clearAll(t, dir, before)
		writeAll(t, dir, after)
		git("add", "-A")
		git("commit", "-qm", "after", "--allow-empty")
		diff := git("diff", fmt.Sprintf("-U%d", rng.IntN(4)), "HEAD~1", "HEAD")
		git("checkout", "-q", "HEAD~1")
		if diff == "" {
			continue
		}
		if o := run(t, dir, diff); o.Kind != outcome.Done {
			t.Fatalf("round %d: %s\n%s", round, o.Message, diff)
		}
		got := readAll(t, dir)
		if !equal(got, after) {
			t.Fatalf("round %d: patch made %q, want %q\n%s", round, got, after, diff)
		}
		git("checkout", "-q", "-f", "HEAD~0")
		clearAll(t, dir, got)
		git("checkout", "-q", "-f", ".")
		cmd := exec.Command("git", "apply", "--unidiff-zero", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("round %d: git apply: %v %s", round, err, out)
		}
		if gitGot := readAll(t, dir); !equal(gitGot, after) {
			t.Fatalf("round %d: git apply made %q, want %q", round, gitGot, after)
		}
	}
}

// randomText is n lines from a few words, so that lines repeat; the last
// line has no line end now and then.
func randomText(rng *rand.Rand, n int) string {
	words := []string{"a", "b", "x := 1", "\treturn", "}", "", "  indented", "end"}
	var b strings.Builder
	for range n {
		b.WriteString(words[rng.IntN(len(words))] + fmt.Sprint(rng.IntN(3)) + "\n")
	}
	s := b.String()
	if rng.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// mutate inserts, deletes and changes a few lines, in the text's line ends
// (patch writes a line in the ends of the place it goes, where git writes
// the patch's bytes; they agree on a file that does not mix them).
func mutate(rng *rand.Rand, s string) string {
	eol := "\n"
	if strings.Contains(s, "\r\n") {
		eol = "\r\n"
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range 1 + rng.IntN(4) {
		at := rng.IntN(len(lines) + 1)
		switch rng.IntN(3) {
		case 0:
			lines = append(lines[:at], append([]string{fmt.Sprintf("new %d", rng.IntN(100)) + eol}, lines[at:]...)...)
		case 1:
			if at < len(lines) && len(lines) > 1 {
				lines = append(lines[:at], lines[at+1:]...)
			}
		default:
			if at < len(lines) {
				lines[at] = fmt.Sprintf("changed %d", rng.IntN(100)) + eol
			}
		}
	}
	out := strings.Join(lines, "")
	switch rng.IntN(5) {
	case 0:
		out = strings.TrimSuffix(out, eol)
	case 1:
		if !strings.HasSuffix(out, "\n") {
			out += eol
		}
	}
	return out
}

func writeAll(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func clearAll(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name := range files {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// endsEarly reports whether a line of a hunk's new side other than its last
// is marked as having no line end: a patch no diff makes, whose new lines
// cannot be in any file as the hunk spells them.
func endsEarly(h Hunk) bool {
	last := -1
	for i, l := range h.Lines {
		if l.Kind != '-' {
			last = i
		}
	}
	for i, l := range h.Lines {
		if l.Kind != '-' && l.NoEnd && i != last {
			return true
		}
	}
	return false
}

// FuzzParse: on any patch, Parse never panics and either fails with a
// line number inside the patch or gives files with a path each; applying
// what it gives to any text never panics, and a hunk that applies leaves
// its new lines in the text (in the text's line endings: added lines take
// those of the file they go into); and the same hunks applied again to what
// they made change nothing and say they were applied already, when each adds
// a line, keeps one, and leaves none of its old runs of lines behind.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Update File: a\n@@ f\n-x\n+y\n*** End of File\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: n\n+a\n*** Delete File: d\n*** Update File: m\n*** Move to: n2\n@@\n a\n-b\n+c\n*** End Patch",
		"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
		"diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n",
		"--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n",
		"@@ -1 +1 @@\n-a\n+b\n",
	} {
		f.Add(s, "a\nb\nx\n")
	}
	f.Fuzz(func(t *testing.T, patch, text string) {
		files, err := Parse(patch)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && (pe.Line < 1 || pe.Line > strings.Count(patch, "\n")+2) {
				t.Fatalf("error at line %d of a %d-line patch: %v", pe.Line, strings.Count(patch, "\n")+1, err)
			}
			return
		}
		for _, file := range files {
			if file.Path == "" {
				t.Fatalf("a file with no path in %q", patch)
			}
			res, err := apply([]byte(text), file.Hunks)
			if err != nil || len(res.levels) > 0 {
				continue
			}
			// A context line keeps the file's own bytes, and the file's last
			// line may have no line end.
			lf := append(bytes.ReplaceAll(res.text, []byte("\r\n"), []byte("\n")), '\n')
			again := len(res.already) == 0
			for i, h := range file.Hunks {
				if endsEarly(h) {
					again = false
					continue // a "\ No newline" inside the new side: no file can hold that
				}
				// An envelope's hunk whose last line is blank may have applied
				// without it, as Codex's do.
				want := strings.ReplaceAll(h.New(), "\r\n", "\n")
				short := strings.TrimSuffix(want, "\n")
				if !h.Unified && strings.HasSuffix(short, "\n") && bytes.Contains(lf, []byte(short)) {
					want = short
				}
				if !slices.Contains(res.already, i+1) && !bytes.Contains(lf, []byte(want)) {
					t.Fatalf("hunk %d (%s) applied exactly, but its new lines %q are not in %q", i+1, h.Header, h.New(), res.text)
				}
				old := strings.ReplaceAll(h.Old(), "\r\n", "\n")
				if !h.Unified && (old == "\n" || strings.HasSuffix(old, "\n\n")) {
					old = strings.TrimSuffix(old, "\n") // as it may apply
				}
				if old == "" || countKind(h.Lines, '+') == 0 || countKind(h.Lines, ' ') == 0 || strings.Contains("\n"+string(lf), "\n"+old) {
					again = false
				}
			}
			if !again {
				continue
			}
			twice, err := apply(res.text, file.Hunks)
			if err != nil || !bytes.Equal(twice.text, res.text) || len(twice.already) != len(file.Hunks) {
				t.Fatalf("applied again to %q: %q, already %v, %v", res.text, twice.text, twice.already, err)
			}
		}
	})
}
