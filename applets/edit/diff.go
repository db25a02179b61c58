package edit

import (
	"bytes"
	"fmt"
	"strings"

	"toolkit/internal/match"
)

// diffContext is the lines of context around each change.
const diffContext = 3

// maxDiffLines is the longest diff shown whole; past it, only its hunk
// headers are.
const maxDiffLines = 200

// diff is the unified diff from the text the edits started with to the one
// they left, for path.
func (ed *editor) diff(path string, before []byte) string {
	aw, bw, base := window(before, ed.text)
	hunks := group(lineDiff(split(aw), split(bw), base))
	if len(hunks) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	lines := 0
	for _, h := range hunks {
		lines += len(h.lines) + 1
	}
	for _, h := range hunks {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rangeOf(h.aStart, h.aLen), rangeOf(h.bStart, h.bLen))
		if lines > maxDiffLines {
			continue
		}
		for _, l := range h.lines {
			out.WriteString(l)
		}
	}
	if lines > maxDiffLines {
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

func myers(a, b []string, base int) []op {
	n, m := len(a), len(b)
	off := n + m // v[off+k] is how far diagonal k got
	v := make([]int, 2*off+2)
	var trace [][]int
	for d := 0; d <= off; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, base, d)
			}
		}
	}
	return nil
}

// backtrack walks the trace of myers back from its end to its start.
func backtrack(trace [][]int, a, b []string, base, d int) []op {
	n, m := len(a), len(b)
	off := n + m
	x, y := n, m
	var rev []op
	for ; d >= 0; d-- {
		v := trace[d]
		k := x - y
		var prevK int
		if k == -d || k != d && v[off+k-1] < v[off+k+1] {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
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
		hunks = append(hunks, h)
		i = stop
	}
	return hunks
}
