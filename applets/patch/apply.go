package patch

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"toolkit/internal/match"
)

// applied is how the hunks of one section went.
type applied struct {
	text    []byte
	added   int // lines
	removed int
	levels  []string // the levels that were not exact, once each
	already []int    // the hunks already applied, from 1
}

// HunkError is a hunk that does not apply: which, where it was looked for,
// and what the file has there.
type HunkError struct {
	Hunk   int // from 1
	Header string
	Msg    string
}

func (e *HunkError) Error() string {
	return fmt.Sprintf("hunk %d (%s) does not apply: %s", e.Hunk, e.Header, e.Msg)
}

// apply applies a section's hunks to text, in order, each found after the
// one before, line by line: a hunk's lines are whole lines of the file,
// never part of one. The lines a hunk keeps keep their bytes, line ends
// included; the lines it adds take the line end of the place they go to.
// The result is built once, whatever the number of hunks.
func apply(text []byte, hunks []Hunk) (applied, error) {
	a := &applier{text: text, lines: match.Lines(text)}
	a.out.Grow(len(text) + len(text)/8)
	for i, h := range hunks {
		if err := a.hunk(i, h); err != nil {
			return a.res, err
		}
	}
	a.copyTo(len(a.lines))
	a.res.text = a.out.Bytes()
	if a.res.text == nil {
		a.res.text = []byte{} // a file left empty is a file, not none
	}
	return a.res, nil
}

type applier struct {
	text   []byte
	lines  []match.Line
	out    bytes.Buffer
	copied int // the lines of text that are in out, or replaced
	pos    int // the first line the next hunk may start at
	res    applied
}

// line is line i of the text without its line end, and with it.
func (a *applier) line(i int) []byte { return a.text[a.lines[i].Start:a.lines[i].ContentEnd] }
func (a *applier) whole(i int) []byte {
	return a.text[a.lines[i].Start:a.lines[i].End]
}

// eol is the line end of the place at line i: that line's, else the line
// before's, else "\n".
func (a *applier) eol(i int) []byte {
	for _, j := range []int{i, i - 1} {
		if j >= 0 && j < len(a.lines) {
			if l := a.lines[j]; l.End > l.ContentEnd {
				return a.text[l.ContentEnd:l.End]
			}
		}
	}
	return []byte("\n")
}

// write puts b in the output, ending the line before it if it had no end
// (the file's last line, when lines come after it now).
func (a *applier) write(b []byte, at int) {
	if n := a.out.Len(); n > 0 && a.out.Bytes()[n-1] != '\n' {
		a.out.Write(a.eol(at))
	}
	a.out.Write(b)
}

// copyTo copies the text's lines up to line n into the output.
func (a *applier) copyTo(n int) {
	if n <= a.copied {
		return
	}
	a.write(a.text[a.lines[a.copied].Start:a.lines[n-1].End], a.copied)
	a.copied = n
}

// sides are a hunk's old lines (context and removed) and new ones (context
// and added).
func sides(lines []Line) (old, new [][]byte) {
	for _, l := range lines {
		if l.Kind != '+' {
			old = append(old, []byte(l.Text))
		}
		if l.Kind != '-' {
			new = append(new, []byte(l.Text))
		}
	}
	return old, new
}

// hunk applies hunk i.
func (a *applier) hunk(i int, h Hunk) error {
	from := a.pos
	for _, anchor := range h.Anchors {
		at, _, ok := a.seek([][]byte{[]byte(anchor)}, from, -1, false, false)
		if !ok {
			return &HunkError{i + 1, h.Header, fmt.Sprintf("its @@ line %q is not in the file after line %d", anchor, from)}
		}
		from = at + 1
	}
	lines := h.Lines
	old, new := sides(lines)
	begin, end := a.anchored(h)
	hint := -1
	if h.Unified {
		hint = h.OldLine - 1 // the text's own lines: the hunks before move nothing
	}
	var at int
	level := match.Exact
	switch {
	case len(old) == 0 && h.Unified:
		// Lines added with no context go where the header says.
		at = min(max(hint, from), len(a.lines))
	case len(old) == 0:
		// Codex puts lines added with no context at the end of the file;
		// after an @@ line, they go after it.
		at = len(a.lines)
		if len(h.Anchors) > 0 {
			at = from
		}
	default:
		var ok bool
		at, level, ok = a.seek(old, from, hint, begin, end)
		if !ok && !h.Unified && len(old[len(old)-1]) == 0 && lines[len(lines)-1].Kind != '+' {
			// A blank last line of an envelope's hunk may stand for the
			// file's last line end: tried without it, as Codex does.
			lines = lines[:len(lines)-1]
			old, new = sides(lines)
			if len(old) == 0 {
				at, ok = from, true
			} else {
				at, level, ok = a.seek(old, from, hint, begin, end)
			}
		}
		if !ok || level != match.Exact {
			// Already applied: its added lines are there with its context,
			// and what it removes is gone. A hunk that adds nothing cannot
			// show that it was applied. Its new lines found as they are
			// outweigh its old ones found only loosely: a change of
			// whitespace applied twice is already applied, not applied
			// again to the same bytes.
			if countKind(lines, '+') > 0 && !slices.EqualFunc(old, new, bytes.Equal) {
				if done, nl, found := a.seek(new, from, hint, begin, end); found && (!ok || nl == match.Exact) {
					a.res.already = append(a.res.already, i+1)
					a.pos = done + len(new)
					return nil
				}
			}
			if !ok {
				return &HunkError{i + 1, h.Header, a.why(old, from, hint, begin, end)}
			}
		}
	}
	if err := a.put(at, lines, len(old), level); err != nil {
		return &HunkError{i + 1, h.Header, "its lines are in the file only with their indentation changed, and not all alike: the lines it adds cannot be re-indented without doubt"}
	}
	if level != match.Exact && !slices.Contains(a.res.levels, level.String()) {
		a.res.levels = append(a.res.levels, level.String())
	}
	return nil
}

// anchored says where a unified hunk must match, as git apply has it: one
// whose header names line 1 (or 0) at the start of the file, one with
// context before its change and none after at the end. A hunk with no
// context at all is placed by its header alone (git apply --unidiff-zero).
func (a *applier) anchored(h Hunk) (begin, end bool) {
	if !h.Unified {
		return false, h.AtEnd
	}
	context := false
	for _, l := range h.Lines {
		if l.Kind == ' ' {
			context = true
			break
		}
	}
	if !context {
		return false, false
	}
	return h.OldStart <= 1, h.Lines[len(h.Lines)-1].Kind != ' '
}

// put writes the hunk's new lines in place of its old lines at line at;
// match.ErrShift where they matched only with their indentation changed,
// in a way that cannot be read without doubt.
func (a *applier) put(at int, lines []Line, n int, level match.Level) error {
	var added [][]byte
	for _, l := range lines {
		if l.Kind == '+' {
			added = append(added, []byte(l.Text))
		}
	}
	if (level == match.Indentation || level == match.Unicode) && len(added) > 0 {
		var err error
		if added, err = a.reindent(at, lines, added); err != nil {
			return err
		}
	}
	a.copyTo(at)
	k, j := at, 0 // the file's line, the added line
	for _, l := range lines {
		switch l.Kind {
		case '+':
			line := added[j]
			j++
			a.write(line, k)
			if !l.NoEnd {
				// The line end of the old line just before it in the hunk
				// (the one it most likely replaces), else of the next.
				a.out.Write(a.eol(max(k-1, at)))
			}
			a.res.added++
		case '-':
			k++
			a.res.removed++
		default:
			a.write(a.whole(k), k)
			k++
		}
	}
	a.copied = at + n
	a.pos = at + n
	return nil
}

// countKind is how many of lines are of kind.
func countKind(lines []Line, kind byte) int {
	n := 0
	for _, l := range lines {
		if l.Kind == kind {
			n++
		}
	}
	return n
}

// reindent gives the added lines the indentation the place has where the
// hunk's old lines had theirs.
func (a *applier) reindent(at int, lines []Line, added [][]byte) ([][]byte, error) {
	var place, old, new bytes.Buffer
	k := at
	for _, l := range lines {
		switch l.Kind {
		case '+':
			continue
		default:
			place.Write(a.line(k))
			place.WriteByte('\n')
			old.WriteString(l.Text + "\n")
			k++
		}
	}
	for _, l := range added {
		new.Write(l)
		new.WriteByte('\n')
	}
	re, err := match.Reindent(place.Bytes(), old.Bytes(), new.Bytes(), false)
	if err != nil {
		return nil, err
	}
	return bytes.Split(re, []byte("\n"))[:len(added)], nil
}

// seek finds want as whole lines of the text at or after line from, level
// by level; at each level a unified hunk takes the place nearest its hint,
// an envelope's the first. begin and end hold it to the start or the end of
// the file. Each search reads each line once (match.FindLines); the one
// nearest a hint looks in a window around it that doubles until it holds a
// place, so a hunk where its header says costs what its lines cost.
func (a *applier) seek(want [][]byte, from, hint int, begin, end bool) (int, match.Level, bool) {
	n := len(want)
	last := len(a.lines) - n // the last line a place may start at
	if n == 0 || last < from {
		return 0, match.Exact, false
	}
	for _, level := range match.LineLevels {
		norm := match.LineNorm(level)
		found := -1
		first := func(lo, hi int) {
			match.FindLines(a.text, a.lines, want, norm, lo, hi, true, func(i int) bool {
				found = i
				return false
			})
		}
		switch {
		case begin && end:
			if from == 0 && last == 0 {
				first(0, 0)
			}
		case begin:
			if from == 0 {
				first(0, 0)
			}
		case end:
			first(last, last)
		case hint < 0:
			first(from, last)
		default:
			found = a.nearest(want, norm, from, last, min(max(hint, from), last))
		}
		if found >= 0 {
			return found, level, true
		}
	}
	return 0, match.Exact, false
}

// nearest is the place of want between lines from and last nearest line h
// (the earlier of two as near), or -1.
func (a *applier) nearest(want [][]byte, norm func([]byte) []byte, from, last, h int) int {
	for w := 16; ; w *= 2 {
		lo, hi := max(from, h-w), min(last, h+w)
		best := -1
		match.FindLines(a.text, a.lines, want, norm, lo, hi, true, func(i int) bool {
			if best < 0 || abs(i-h) < abs(best-h) {
				best = i
			}
			return i < h // past h, the places only get further
		})
		if best >= 0 || lo == from && hi == last {
			return best
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// why says why a hunk's old lines were not found: where they are if
// they are in the file but not where the hunk may go, else the line the
// hunk expected and the nearest the file has, with their numbers.
func (a *applier) why(old [][]byte, from, hint int, begin, end bool) string {
	if at, _, ok := a.seek(old, 0, hint, false, false); ok {
		where := fmt.Sprintf("lines %d-%d", at+1, at+len(old))
		if len(old) == 1 {
			where = fmt.Sprintf("line %d", at+1)
		}
		switch {
		case at < from:
			return fmt.Sprintf("its lines are at %s, before where it may go (after line %d, where the hunk or @@ line before it is)", where, from)
		case begin:
			return fmt.Sprintf("its header puts it at the start of the file, and its lines are at %s", where)
		case end:
			return fmt.Sprintf("it has no context after its change, so it must end the file, and its lines are at %s", where)
		}
	}
	if len(a.lines) == 0 {
		return "the file is empty"
	}
	if from >= len(a.lines) {
		return fmt.Sprintf("the file has no line after line %d, where the hunk or @@ line before it is", from)
	}
	var want bytes.Buffer
	for _, l := range old {
		want.Write(l)
		want.WriteByte('\n')
	}
	rest := a.text[a.lines[from].Start:]
	n, ok := match.Closest(rest, want.Bytes())
	if !ok {
		return fmt.Sprintf("the file has no line after line %d", from)
	}
	if n.Line == 0 {
		return fmt.Sprintf("its lines are at %d-%d but for blanks at their ends", from+n.First, from+n.Last)
	}
	if from+n.Line > len(a.lines) || n.PastEnd {
		return fmt.Sprintf("the file ends at line %d, where the hunk expects %q next", len(a.lines), n.Want)
	}
	// Where the hunk's header puts that line, or, with no header, where
	// the nearest place does.
	expected := from + n.Line
	if hint >= 0 {
		expected = hint + n.Index
	}
	have := strings.TrimRight(n.Have, "\r")
	return fmt.Sprintf("expected line %d to be %q; the nearest the file has is line %d, %q", expected, n.Want, from+n.Line, have)
}
