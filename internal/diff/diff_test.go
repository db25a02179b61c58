package diff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestDiff: the diff of a change, hunk by hunk, with the lines
// numbered as both sides have them.
func TestDiff(t *testing.T) {
	before := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20")
	after := []byte("1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n")
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
	if got := Unified("f", before, after); got != want {
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
		diff := Unified("f", []byte(before), []byte(now))
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
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	Unified("f", []byte(before.String()), []byte(after.String()))
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<20 {
		t.Fatalf("the diff allocated %d MiB", got>>20)
	}
}

// TestCount: the lines a change adds and removes, as its diff shows them.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		before, after  string
		added, removed int
	}{
		{"a\nb\nc\n", "a\nB\nc\nd\n", 2, 1},
		{"", "x\ny\n", 2, 0},
		{"x\ny\n", "", 0, 2},
		{"same\n", "same\n", 0, 0},
		{"no end", "no end\n", 1, 1},
	} {
		if a, r := Count([]byte(tc.before), []byte(tc.after)); a != tc.added || r != tc.removed {
			t.Errorf("%q → %q: +%d -%d, want +%d -%d", tc.before, tc.after, a, r, tc.added, tc.removed)
		}
	}
}

// countOps is Count as the diff's own lines count it.
func countOps(before, after []byte) (added, removed int) {
	aw, bw, base := window(before, after)
	for _, o := range lineDiff(split(aw), split(bw), base) {
		switch o.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

// TestCountAsDiffShows: Count, which searches only the lines both sides
// have, says what the diff's lines say, for random edits, every line
// rewritten (sed -i), lines moved about, repeated lines, and rewrites past
// maxEdits, which the diff shows replaced.
func TestCountAsDiffShows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	text := func(lines []string) []byte { return []byte(strings.Join(lines, "")) }
	for round := range 400 {
		var lines []string
		n := rng.IntN(80)
		if round%50 == 0 {
			n = 2100 + rng.IntN(400)
		}
		for i := range n {
			lines = append(lines, fmt.Sprintf("l%d\n", rng.IntN(max(1, n/(1+rng.IntN(4))))+i*rng.IntN(2)))
		}
		after := slices.Clone(lines)
		switch rng.IntN(4) {
		case 0: // every line rewritten
			for i := range after {
				after[i] = "x" + after[i]
			}
		case 1: // moved about
			rng.Shuffle(len(after), func(i, j int) { after[i], after[j] = after[j], after[i] })
		default:
			for range 1 + rng.IntN(6) {
				at := rng.IntN(len(after) + 1)
				switch rng.IntN(3) {
				case 0:
					if at < len(after) {
						after[at] = "changed\n"
					}
				case 1:
					if at < len(after) {
						after = slices.Delete(after, at, at+1)
					}
				default:
					after = slices.Insert(after, at, lines[rng.IntN(max(1, len(lines)))%max(1, len(lines))])
				}
			}
		}
		before, now := text(lines), text(after)
		if rng.IntN(4) == 0 {
			now = []byte(strings.TrimSuffix(string(now), "\n"))
		}
		ga, gr := Count(before, now)
		wa, wr := countOps(before, now)
		if ga != wa || gr != wr {
			t.Fatalf("round %d (%d lines → %d): Count +%d -%d, the diff +%d -%d", round, len(lines), len(after), ga, gr, wa, wr)
		}
	}
}

// FuzzCount: Count agrees with the diff's lines on any two texts.
func FuzzCount(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\nd\n")
	f.Add("x\ny\nx\n", "y\nx\ny")
	f.Add("", "x\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		ga, gr := Count([]byte(before), []byte(after))
		wa, wr := countOps([]byte(before), []byte(after))
		if ga != wa || gr != wr {
			t.Fatalf("Count +%d -%d, the diff +%d -%d", ga, gr, wa, wr)
		}
	})
}

// BenchmarkCount: the counts of a 10 KB file whose every line a command
// rewrote, and of one with a line changed.
func BenchmarkCount(b *testing.B) {
	var lines []string
	for i := range 140 {
		lines = append(lines, fmt.Sprintf("line %d of a file of some length, written for the benchmark\n", i))
	}
	before := []byte(strings.Join(lines, ""))
	every := []byte("x" + strings.ReplaceAll(strings.TrimSuffix(string(before), "\n"), "\n", "\nx") + "\n")
	one := []byte(strings.Replace(string(before), "line 70 ", "LINE 70 ", 1))
	for _, c := range []struct {
		name  string
		after []byte
	}{{"every", every}, {"one", one}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Count(before, c.after)
			}
		})
		b.Run(c.name+"/by-the-diff", func(b *testing.B) {
			for b.Loop() {
				countOps(before, c.after)
			}
		})
	}
}

// TestUnifiedNames: a file made or removed is diffed against /dev/null,
// and an absolute name loses its leading slash after a/ and b/, as git
// and diff -u write them.
func TestUnifiedNames(t *testing.T) {
	for _, tc := range []struct {
		from, to, head string
		before, after  string
	}{
		{"new.txt", "", "--- a/new.txt\n+++ /dev/null\n", "x\n", ""},
		{"", "new.txt", "--- /dev/null\n+++ b/new.txt\n", "", "x\n"},
		{"/workspace/a.py", "/workspace/a.py", "--- a/workspace/a.py\n+++ b/workspace/a.py\n", "x\n", "y\n"},
	} {
		got := UnifiedFiles(tc.from, tc.to, []byte(tc.before), []byte(tc.after))
		if !strings.HasPrefix(got, tc.head) {
			t.Errorf("%q → %q: %q, want it to begin %q", tc.from, tc.to, got, tc.head)
		}
	}
}
