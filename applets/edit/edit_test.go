package edit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
)

// TestNoLostUpdate: 1000 edits race with each other and with a writer on
// one file. Each edit adds a "#" before the end marker, each of the
// writer's writes a "w" line; an edit that read the file before another
// change landed must fail as a conflict, never write over it. At the end the
// file holds exactly one "#" per edit that succeeded and one "w" per write.
func TestNoLostUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("<END>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const editors, each, writes = 4, 250, 200
	var mu sync.Mutex
	done, conflicts, writesDone := 0, 0, 0
	var wg sync.WaitGroup
	for range editors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				o := Run(t.Context(), Args{Path: path, Edits: []Edit{{OldText: "<END>", NewText: "#<END>"}}})
				mu.Lock()
				switch {
				case o.Kind == outcome.Done:
					done++
				case strings.Contains(o.Message, "changed while it was edited"):
					conflicts++
				default:
					t.Errorf("edit: %s", o.Message)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The writer appends a line, on the condition that the file is what
		// it read: write with if_match.
		for range writes {
			old, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			sum := sha256.Sum256(old)
			staged, err := replace.Stage(nil, path, func(w io.Writer) error {
				_, err := w.Write(append(append([]byte(nil), old...), "w\n"...))
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := staged.Commit(replace.Expect{SHA256: hex.EncodeToString(sum[:])}); err == nil {
				mu.Lock()
				writesDone++
				mu.Unlock()
			}
		}
	}()
	wg.Wait()
	got, _ := os.ReadFile(path)
	hashes, ws := bytes.Count(got, []byte("#")), bytes.Count(got, []byte("w\n"))
	t.Logf("%d edits done, %d conflicts; %d writes done", done, conflicts, writesDone)
	if hashes != done || ws != writesDone {
		t.Fatalf("the file holds %d # for %d edits done and %d w for %d writes: updates were lost", hashes, done, ws, writesDone)
	}
	if done == 0 {
		t.Fatal("no edit succeeded")
	}
}

// TestDiff: the diff of an edit's change, hunk by hunk, with the lines
// numbered as both sides have them.
func TestDiff(t *testing.T) {
	before := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20")
	ed := &editor{text: []byte("1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n")}
	want := `--- a/f
+++ b/f
@@ -1,7 +1,7 @@
 1
 2
 3
-4
+four
 5
 6
 7
@@ -17,4 +17,4 @@
 17
 18
 19
-20
\ No newline at end of file
+20
`
	if got := ed.diff("f", before); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestDiffApplies: the diff of random changes to random texts, applied by
// git apply to the text before, gives the text after; the lines the window
// leaves out are counted in the hunk headers, or git would refuse them.
func TestDiffApplies(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for round := range 60 {
		var lines []string
		for i := range 20 + rng.IntN(60) {
			lines = append(lines, fmt.Sprintf("line %d %c\n", i, 'a'+rng.IntN(3)))
		}
		after := append([]string(nil), lines...)
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(after))
			switch rng.IntN(3) {
			case 0:
				after[at] = "changed\n"
			case 1:
				after = append(after[:at], after[at+1:]...)
			default:
				after = slices.Insert(after, at, "new\n")
			}
		}
		before, now := strings.Join(lines, ""), strings.Join(after, "")
		if rng.IntN(3) == 0 {
			before = strings.TrimSuffix(before, "\n")
		}
		if rng.IntN(3) == 0 {
			now = strings.TrimSuffix(now, "\n")
		}
		if before == now {
			continue
		}
		ed := &editor{text: []byte(now)}
		diff := ed.diff("f", []byte(before))
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "apply", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("round %d: git apply: %v: %s\n%s", round, err, out, diff)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "f"))
		if string(got) != now {
			t.Fatalf("round %d: applied %q, want %q\n%s", round, got, now, diff)
		}
	}
}

// TestLineDiffSides: the kept and removed lines of a diff are the text
// before, the kept and added ones the text after, for changes small enough
// for the shortest script and for rewrites past maxEdits (shown as removed,
// then added).
func TestLineDiffSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 40 {
		n := 1 + rng.IntN(50)
		if round%4 == 0 {
			n = maxEdits + rng.IntN(3000)
		}
		var a, b []string
		for i := range n {
			a = append(a, fmt.Sprintf("%d %c\n", i%7, 'a'+rng.IntN(2)))
			if rng.IntN(3) > 0 || round%4 == 0 {
				b = append(b, fmt.Sprintf("x%d\n", rng.IntN(5)))
			} else {
				b = append(b, a[i])
			}
		}
		var gotA, gotB []string
		for _, o := range lineDiff(a, b, 0) {
			if o.kind != '+' {
				gotA = append(gotA, o.line)
			}
			if o.kind != '-' {
				gotB = append(gotB, o.line)
			}
		}
		if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
			t.Fatalf("round %d (%d lines): the diff's sides are not the texts", round, n)
		}
	}
}

// TestRewriteMemory: the diff of a 4,000-line rewrite allocates well under
// 64 MiB (Myers keeping each step's whole vector took 1 GiB).
func TestRewriteMemory(t *testing.T) {
	var before, after strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&before, "old line %d\n", i)
		fmt.Fprintf(&after, "new line %d\n", i)
	}
	ed := &editor{text: []byte(after.String())}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	ed.diff("f", []byte(before.String()))
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<20 {
		t.Fatalf("the diff allocated %d MiB", got>>20)
	}
}

// TestLongLineDiff: six bytes edited in the middle of a 10 MiB line answer
// with the change and 2,000 characters around it on each side, each cut
// line saying how much it left out; the file gets the whole line.
func TestLongLineDiff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.txt")
	line := strings.Repeat("a", 5<<20) + "needle" + strings.Repeat("b", 5<<20)
	if err := os.WriteFile(path, []byte("first\n"+line+"\nlast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Run(t.Context(), Args{Path: path, Edits: []Edit{{OldText: "needle", NewText: "pinned"}}})
	if o.Kind != outcome.Done {
		t.Fatal(o.Message)
	}
	if len(o.Text) > 10<<10 {
		t.Fatalf("the answer is %d bytes", len(o.Text))
	}
	for _, want := range []string{"-[… 5242380 characters] aaa", "aneedlebbb", "+[… 5242380 characters] aaa", "apinnedbbb", "… [line cut: 5241386 characters]\n"} {
		if !strings.Contains(o.Text, want) {
			t.Fatalf("no %q in the answer:\n%.3000s", want, o.Text)
		}
	}
	got, _ := os.ReadFile(path)
	if want := "first\n" + strings.Replace(line, "needle", "pinned", 1) + "\nlast\n"; string(got) != want {
		t.Fatal("the file is not the line edited")
	}
}
