package patch

import (
	"bytes"
	"fmt"
	"strings"

	"toolkit/internal/match"
)

// applied is how the hunks of one file went.
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

// apply applies a file's hunks to text, in order, each found after the one
// before.
func apply(text []byte, hunks []Hunk) (applied, error) {
	res := applied{text: text}
	pos := 0   // where the next hunk is looked for
	shift := 0 // lines the hunks so far added, less those they removed
	for i, h := range hunks {
		old, new := []byte(h.Old()), []byte(h.New())
		from := pos
		for _, a := range h.Anchors {
			at, ok := findLine(res.text, from, a)
			if !ok {
				return res, &HunkError{i + 1, h.Header, fmt.Sprintf("its @@ line %q is not in the file after line %d", a, lineOf(res.text, from))}
			}
			from = at
		}
		var span match.Span
		level := match.Exact
		switch {
		case len(old) == 0:
			// Lines added with no context: after the anchor, at the line the
			// header names, or at the end.
			at := len(res.text)
			switch {
			case len(h.Anchors) > 0:
				at = from
			case h.OldLine > 0 && !h.AtEnd:
				at = max(from, lineStart(res.text, h.OldLine+shift))
			}
			span = match.Span{Start: at, End: at}
		default:
			var spans []match.Span
			level, spans = match.Find(res.text[from:], old)
			spans = shifted(spans, from)
			if h.AtEnd {
				spans = atEnd(res.text, spans)
			}
			if len(spans) == 0 {
				if len(new) > 0 && !bytes.Equal(old, new) {
					if _, done := match.Find(res.text[from:], new); len(done) > 0 {
						res.already = append(res.already, i+1)
						continue
					}
				}
				return res, &HunkError{i + 1, h.Header, nearest(res.text, from, old, h.OldLine+shift)}
			}
			span = nearestTo(res.text, spans, h.OldLine+shift)
		}
		repl := match.Replacement(res.text, span, level, old, new)
		gone, came := count(h, '-'), count(h, '+')
		res.removed += gone
		res.added += came
		shift += came - gone
		if level != match.Exact && !contains(res.levels, level.String()) {
			res.levels = append(res.levels, level.String())
		}
		var out bytes.Buffer
		out.Grow(len(res.text) + len(repl) - (span.End - span.Start))
		out.Write(res.text[:span.Start])
		out.Write(repl)
		out.Write(res.text[span.End:])
		pos = span.Start + len(repl)
		res.text = out.Bytes()
	}
	return res, nil
}

func count(h Hunk, kind byte) int {
	n := 0
	for _, l := range h.Lines {
		if l.Kind == kind {
			n++
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func shifted(spans []match.Span, by int) []match.Span {
	for i := range spans {
		spans[i].Start += by
		spans[i].End += by
	}
	return spans
}

// atEnd keeps the places that end the text.
func atEnd(text []byte, spans []match.Span) []match.Span {
	var out []match.Span
	for _, s := range spans {
		if rest := text[s.End:]; len(bytes.TrimRight(rest, "\r\n")) == 0 {
			out = append(out, s)
		}
	}
	return out
}

// nearestTo is the place nearest the line the hunk's header names; the
// first when it names none.
func nearestTo(text []byte, spans []match.Span, line int) match.Span {
	best := spans[0]
	if line <= 0 {
		return best
	}
	dist := func(s match.Span) int {
		d := lineOf(text, s.Start) - line
		if d < 0 {
			return -d
		}
		return d
	}
	for _, s := range spans[1:] {
		if dist(s) < dist(best) {
			best = s
		}
	}
	return best
}

// findLine finds, at or after from, a line that is anchor (compared as a
// hunk's lines are, down to its blanks and look-alikes), and returns where
// the line after it starts.
func findLine(text []byte, from int, anchor string) (int, bool) {
	_, spans := match.Find(text[from:], []byte(anchor))
	if len(spans) == 0 {
		return 0, false
	}
	at := from + spans[0].Start
	lineEnd := bytes.IndexByte(text[at:], '\n')
	if lineEnd < 0 {
		return len(text), true
	}
	return at + lineEnd + 1, true
}

// lineOf is the line, from 1, that offset at is on.
func lineOf(text []byte, at int) int { return bytes.Count(text[:min(at, len(text))], nl) + 1 }

// lineStart is where line n (from 1) starts, or the end of the text.
func lineStart(text []byte, n int) int {
	at := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(text[at:], '\n')
		if i < 0 {
			return len(text)
		}
		at += i + 1
	}
	return at
}

var nl = []byte{'\n'}

// nearest says where a hunk's lines were looked for and what the file has:
// the line the hunk expected and the nearest line the file has, with their
// numbers.
func nearest(text []byte, from int, old []byte, hint int) string {
	n, ok := match.Closest(text[from:], old)
	if !ok {
		return "the file is empty"
	}
	base := lineOf(text, from) - 1
	if n.Line == 0 {
		return fmt.Sprintf("its lines are at %d-%d but for blanks at their ends", base+n.First, base+n.Last)
	}
	// Where the hunk's header puts that line, or, with no header, where
	// the nearest place does.
	expected := base + n.Line
	if hint > 0 {
		expected = hint + n.Index - 1
	}
	have := strings.TrimRight(n.Have, "\r")
	return fmt.Sprintf("expected line %d to be %q; the nearest the file has is line %d, %q", expected, n.Want, base+n.Line, have)
}
