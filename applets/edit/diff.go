package edit

import (
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
	a, b := split(before), split(ed.text)
	hunks := group(lineDiff(a, b))
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
func lineDiff(a, b []string) []op {
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
		ops = append(ops, op{' ', i, i, a[i]})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre)...)
	for k := suf; k > 0; k-- {
		ops = append(ops, op{' ', len(a) - k, len(b) - k, a[len(a)-k]})
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
