// Package diff writes the unified diff of two texts, as edit shows its
// change and history a call's: the shortest edit script up to 2,000 lines
// changed (Myers), each hunk with 3 lines of context, long lines cut around
// their change, and a diff over MaxLines shown as its hunk headers only.
package diff

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strings"

	"toolkit/internal/match"
	"toolkit/internal/text"
)

// diffContext is the lines of context around each change.
const diffContext = 3

var nl = []byte{'\n'}

// MaxLines is the longest diff shown whole; past it, only its hunk
// headers are.
const MaxLines = 200

// Unified is the unified diff from before to after, for path; "" when they
// hold the same lines.
func Unified(path string, before, after []byte) string {
	return UnifiedFiles(path, path, before, after)
}

// UnifiedFiles is Unified between two names: from's before, to's after;
// "" is /dev/null, for a file made ("" before) or removed ("" after), as
// diff -u, git and patch write it. An absolute name loses its leading
// slash after the a/ and b/ (a/workspace/x, not a//workspace/x).
func UnifiedFiles(from, to string, before, after []byte) string {
	aw, bw, base := window(before, after)
	hunks := group(lineDiff(split(aw), split(bw), base))
	if len(hunks) == 0 {
		return ""
	}
	var out strings.Builder
	// A name with a newline in it cannot pass for a line of the diff.
	name := func(prefix, p string) string {
		if p == "" {
			return "/dev/null"
		}
		return prefix + strings.TrimLeft(text.Escape(p), "/")
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name("a/", from), name("b/", to))
	lines := 0
	for _, h := range hunks {
		lines += len(h.lines) + 1
	}
	for _, h := range hunks {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rangeOf(h.aStart, h.aLen), rangeOf(h.bStart, h.bLen))
		if lines > MaxLines {
			continue
		}
		for _, l := range h.lines {
			out.WriteString(l)
		}
	}
	if lines > MaxLines {
		fmt.Fprintf(&out, "[the diff is %d lines: only its hunk headers are shown]\n", lines)
	}
	return out.String()
}

// rangeOf is a hunk header's range: "12,3", "12" for one line, "11,0" for none.
func rangeOf(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// window is the lines of a and b that differ, with diffContext lines
// around them, and how many lines come before: the lines an edit leaves
// alike are never split, so a change to a large file costs what the change
// costs.
func window(a, b []byte) (aw, bw []byte, base int) {
	const block = 4096 // compared whole first, a byte at a time after
	pre := 0
	for pre+block <= min(len(a), len(b)) && bytes.Equal(a[pre:pre+block], b[pre:pre+block]) {
		pre += block
	}
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf+block <= min(len(a), len(b))-pre && bytes.Equal(a[len(a)-suf-block:len(a)-suf], b[len(b)-suf-block:len(b)-suf]) {
		suf += block
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	pre = bytes.LastIndexByte(a[:pre], '\n') + 1 // back to a line's start
	for range diffContext {
		if pre > 0 {
			pre = bytes.LastIndexByte(a[:pre-1], '\n') + 1
		}
	}
	for range diffContext + 1 { // on to a line's start, then past diffContext lines
		i := bytes.IndexByte(a[len(a)-suf:], '\n')
		if i < 0 {
			suf = 0
			break
		}
		suf -= i + 1
		if suf < 0 {
			suf = 0
		}
	}
	return a[pre : len(a)-suf], b[pre : len(b)-suf], bytes.Count(a[:pre], nl)
}

// split is text's lines, each with its line end, the last without one
// marked as diff marks it.
func split(text []byte) []string {
	var out []string
	for _, l := range match.Lines(text) {
		s := string(text[l.Start:l.End])
		if !strings.HasSuffix(s, "\n") {
			s += "\n\\ No newline at end of file\n"
		}
		out = append(out, s)
	}
	return out
}

// op is one line of a diff: kept (' '), removed ('-') or added ('+'), with
// its place in a and in b.
type op struct {
	kind byte
	a, b int    // 0-based line in a and in b before which, or at which, it is
	line string // the line, with its line end
}

// lineDiff is a shortest edit script from a to b (Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986), after the lines the two
// begin and end with alike are set aside: an edit changes a few lines of a
// file, and the search then runs over those alone.
func lineDiff(a, b []string, base int) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for i := range pre {
		ops = append(ops, op{' ', base + i, base + i, a[i]})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], base+pre)...)
	for k := suf; k > 0; k-- {
		ops = append(ops, op{' ', base + len(a) - k, base + len(b) - k, a[len(a)-k]})
	}
	return ops
}

// maxEdits bounds the edit script myers searches for: its trace keeps the
// diagonals -d..d of each step d, (maxEdits+1)² numbers in all (16 MiB).
// A change of more lines than that is shown as the old lines removed and the
// new ones added, which is a correct diff, if not the shortest.
const maxEdits = 2000

func myers(a, b []string, base int) []op {
	n, m := len(a), len(b)
	if n == 0 || m == 0 || !near(n, m) {
		return replaced(a, b, base)
	}
	// trace[d] holds v of step d for diagonals -d..d: v[d+k] is how far
	// diagonal k got.
	var trace [][]int32
	prev := []int32{0} // step -1's diagonal 1 reaches x = 0: v[1] = 0
	for d := 0; d <= min(n+m, maxEdits); d++ {
		v := make([]int32, 2*d+1)
		at := func(vs []int32, dd, k int) int {
			if k < -dd || k > dd {
				return -1
			}
			return int(vs[dd+k])
		}
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || k != d && at(prev, d-1, k-1) < at(prev, d-1, k+1):
				x = at(prev, d-1, k+1)
			default:
				x = at(prev, d-1, k-1) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[d+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, v)
				return backtrack(trace, a, b, base, d)
			}
		}
		trace = append(trace, v)
		prev = v
	}
	return replaced(a, b, base)
}

// near reports whether n and m differ by little enough that a short edit
// script may join them.
func near(n, m int) bool { return max(n, m)-min(n, m) <= maxEdits }

// replaced is the diff that removes every line of a and adds every line of b.
func replaced(a, b []string, base int) []op {
	ops := make([]op, 0, len(a)+len(b))
	for i, l := range a {
		ops = append(ops, op{'-', base + i, base, l})
	}
	for j, l := range b {
		ops = append(ops, op{'+', base + len(a), base + j, l})
	}
	return ops
}

// backtrack walks the trace of myers back from its end to its start.
func backtrack(trace [][]int32, a, b []string, base, d int) []op {
	n, m := len(a), len(b)
	x, y := n, m
	var rev []op
	for ; d >= 0; d-- {
		k := x - y
		var prevX, prevY int
		if d > 0 {
			pv := trace[d-1]
			at := func(k int) int {
				if k < -(d-1) || k > d-1 {
					return -1
				}
				return int(pv[d-1+k])
			}
			prevK := k - 1
			if k == -d || k != d && at(k-1) < at(k+1) {
				prevK = k + 1
			}
			prevX = at(prevK)
			prevY = prevX - prevK
		}
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', base + x, base + y, a[x]})
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, op{'+', base + x, base + prevY, b[prevY]})
			} else {
				rev = append(rev, op{'-', base + prevX, base + y, a[prevX]})
			}
		}
		x, y = prevX, prevY
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

type hunk struct {
	aStart, aLen, bStart, bLen int // 1-based starts
	lines                      []string
}

// group makes hunks of the changes, each with diffContext lines around it,
// joining those that come close.
func group(ops []op) []hunk {
	var hunks []hunk
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A change starts at i: take context before it, then run on while
		// changes come within 2*diffContext kept lines of each other.
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' && k-end < 2*diffContext+1 {
				k++
			}
			if k < len(ops) && ops[k].kind != ' ' && k-end <= 2*diffContext {
				end = k
				continue
			}
			break
		}
		stop := min(len(ops), end+diffContext)
		h := hunk{aStart: ops[start].a + 1, bStart: ops[start].b + 1}
		for _, o := range ops[start:stop] {
			h.lines = append(h.lines, string(o.kind)+o.line)
			if o.kind != '+' {
				h.aLen++
			}
			if o.kind != '-' {
				h.bLen++
			}
		}
		cutLong(h.lines)
		hunks = append(hunks, h)
		i = stop
	}
	return hunks
}

// cutLong cuts each line of a hunk longer than text.MaxLineChars to that
// many characters around where it changed, as read cuts a long line: a
// removed line and the added one in its place (the kth of each in a run of
// changes) are cut around the first character where they differ, a kept
// line at its start. Six bytes changed in a 10 MiB line show as 2,000
// characters each side, not 20 MB.
func cutLong(lines []string) {
	for i := 0; i < len(lines); {
		if lines[i][0] == ' ' {
			lines[i] = cutLine(lines[i], 0)
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j][0] == '-' {
			j++
		}
		k := j
		for k < len(lines) && lines[k][0] == '+' {
			k++
		}
		// The kth removed line and the kth added one differ first at the
		// same byte: found before either is cut.
		ats := make([]int, k-i)
		for n := i; n < j && j+n-i < k; n++ {
			a, b := lines[n][1:], lines[j+n-i][1:]
			at := 0
			for at < len(a) && at < len(b) && a[at] == b[at] {
				at++
			}
			ats[n-i], ats[j+n-i-i] = at, at
		}
		for n := i; n < k; n++ {
			lines[n] = cutLine(lines[n], ats[n-i])
		}
		i = max(k, i+1)
	}
}

// cutLine cuts a diff line (its kind, its text, its line end) longer than
// text.MaxLineChars characters to that many around the byte at, as
// text.CutLine does.
func cutLine(line string, at int) string {
	kind, body := line[:1], line[1:]
	end := ""
	if k := strings.IndexByte(body, '\n'); k >= 0 {
		body, end = body[:k], body[k:] // the line end, and a "\ No newline" note
	}
	return kind + text.CutLine(body, at) + end
}

// Count is how many lines a change from before to after adds and removes,
// as its unified diff shows them, without making the diff: of a shortest
// edit script only its length is needed, and a line that one side lacks is
// in every such script, so the search runs over the lines both sides have.
// A command that rewrote every line of a file (sed -i) costs a pass over
// them, where the script's search costs their number squared. The lines
// are compared as the bytes they are, line end included, which tells a
// last line without one apart as the diff's marker does.
func Count(before, after []byte) (added, removed int) {
	aw, bw, _ := window(before, after)
	a, b := linesOf(aw), linesOf(bw)
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(a), len(b)
	if n == 0 || m == 0 || !near(n, m) {
		return m, n // as myers shows it: every line replaced
	}
	// Each side's lines by their hash: one whose hash the other side lacks
	// is set aside (a collision keeps a line, which costs the search a
	// little and changes no count).
	seed := maphash.MakeSeed()
	ha, hb := make([]uint64, n), make([]uint64, m)
	inA, inB := make(map[uint64]bool, n), make(map[uint64]bool, m)
	for i, l := range a {
		ha[i] = maphash.Bytes(seed, l)
		inA[ha[i]] = true
	}
	for i, l := range b {
		hb[i] = maphash.Bytes(seed, l)
		inB[hb[i]] = true
	}
	a, ha = shared(a, ha, inB)
	b, hb = shared(b, hb, inA)
	alone := n - len(a) + m - len(b)
	d, ok := distance(a, b, ha, hb, maxEdits-alone)
	if !ok {
		return m, n // past maxEdits: shown replaced
	}
	common := (n + m - alone - d) / 2
	return m - common, n - common
}

// linesOf is text's lines, each with its line end.
func linesOf(text []byte) [][]byte {
	lines := bytes.SplitAfter(text, nl)
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// shared is the lines whose hashes are in other, with their hashes.
func shared(lines [][]byte, hashes []uint64, other map[uint64]bool) ([][]byte, []uint64) {
	k := 0
	for i := range lines {
		if other[hashes[i]] {
			lines[k], hashes[k] = lines[i], hashes[i]
			k++
		}
	}
	return lines[:k], hashes[:k]
}

// distance is the length of a shortest edit script from a to b, whose
// lines hash to ha and hb, if it is at most limit (Myers's search, its
// furthest points alone).
func distance(a, b [][]byte, ha, hb []uint64, limit int) (int, bool) {
	n, m := len(a), len(b)
	limit = min(limit, n+m)
	if limit < 0 {
		return 0, false
	}
	o := limit + 1 // v[o+k] is how far diagonal k got
	v := make([]int, 2*limit+3)
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[o+k-1] < v[o+k+1] {
				x = v[o+k+1]
			} else {
				x = v[o+k-1] + 1
			}
			y := x - k
			for x < n && y < m && ha[x] == hb[y] && bytes.Equal(a[x], b[y]) {
				x, y = x+1, y+1
			}
			v[o+k] = x
			if x >= n && y >= m {
				return d, true
			}
		}
	}
	return 0, false
}
