package edit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"toolkit/internal/match"
)

// editor applies edits to a text, and keeps where each landed.
type editor struct {
	text   []byte
	ranges []EditResult // the edits so far, their lines in text
}

// maxListed is how many places an error about several lists.
const maxListed = 10

// apply applies edit e, the ith.
func (ed *editor) apply(i int, e Edit) (EditResult, error) {
	if e.InsertLine != nil {
		return ed.insert(i, *e.InsertLine, e.NewText)
	}
	old, new := []byte(e.OldText), []byte(e.NewText)
	level, spans := match.Find(ed.text, old)
	switch {
	case len(spans) == 0:
		return EditResult{}, notFound(i, ed.text, old)
	case len(spans) > 1 && !e.ReplaceAll:
		var lines []string
		for _, s := range spans[:min(len(spans), maxListed)] {
			lines = append(lines, fmt.Sprint(lineOf(ed.text, s.Start)))
		}
		more := ""
		if len(spans) > maxListed {
			more = fmt.Sprintf(" and %d more", len(spans)-maxListed)
		}
		return EditResult{}, fmt.Errorf("edits[%d]: old_text is in %d places (lines %s%s); quote more of the lines around the one to change, or set replace_all", i, len(spans), strings.Join(lines, ", "), more)
	}
	res := EditResult{Index: i, Matched: level.String(), Replacements: len(spans)}
	if level == match.Unicode {
		res.LookAlikes = match.LookAlikes(ed.text[spans[0].Start:spans[0].End], old)
	}
	type moved struct{ line, gone, came int } // a place: its line, and the line ends it took and gave
	var places []moved
	var out bytes.Buffer
	out.Grow(len(ed.text) + len(spans)*(len(new)-len(old)) + 64)
	at, shift := 0, 0 // shift: the line ends the places before gave, less those they took
	for k, s := range spans {
		repl, err := match.Replacement(ed.text, s, level, old, new)
		if err != nil {
			return EditResult{}, shiftError(i, ed.text, s)
		}
		out.Write(ed.text[at:s.Start])
		out.Write(repl)
		at = s.End
		p := moved{lineOf(ed.text, s.Start), bytes.Count(ed.text[s.Start:s.End], nl), bytes.Count(repl, nl)}
		places = append(places, p)
		first, last := p.line+shift, p.line+shift+p.came
		if p.came > 0 && repl[len(repl)-1] == '\n' {
			last-- // the place ends at its last line's end
		}
		if k == 0 {
			res.FirstLine = first
		}
		res.LastLine = max(last, first)
		shift += p.came - p.gone
	}
	out.Write(ed.text[at:])
	// The edits before move with the places that come before them.
	for r := range ed.ranges {
		delta := 0
		for _, p := range places {
			if p.line+p.gone < ed.ranges[r].FirstLine {
				delta += p.came - p.gone
			}
		}
		ed.ranges[r].FirstLine += delta
		ed.ranges[r].LastLine += delta
	}
	ed.text = out.Bytes()
	ed.ranges = append(ed.ranges, res)
	return res, nil
}

var nl = []byte{'\n'}

// errBeyond is an insert_line past the text's last line: the input's
// fault.
type errBeyond struct{ i, line, lines int }

func (e *errBeyond) Error() string {
	return fmt.Sprintf("edits[%d]: insert_line %d is not a line of the file, which has %d (0 inserts before the first)", e.i, e.line, e.lines)
}

// insert puts ins in as lines of their own after line n of the text (0:
// before the first), every one ending as the text's lines do ("\r\n" in
// a CRLF text), as the text editor tool's insert does.
func (ed *editor) insert(i, n int, ins string) (EditResult, error) {
	lines := bytes.Count(ed.text, nl)
	if len(ed.text) > 0 && ed.text[len(ed.text)-1] != '\n' {
		lines++
	}
	if n > lines {
		return EditResult{}, &errBeyond{i, n, lines}
	}
	eol := "\n"
	if bytes.Contains(ed.text, []byte("\r\n")) {
		eol = "\r\n"
	}
	at := 0
	for range n {
		k := bytes.IndexByte(ed.text[at:], '\n')
		if k < 0 {
			at = len(ed.text)
			break
		}
		at += k + 1
	}
	piece := strings.ReplaceAll(strings.ReplaceAll(ins, "\r\n", "\n"), "\n", eol)
	if !strings.HasSuffix(piece, eol) {
		piece += eol
	}
	if at == len(ed.text) && at > 0 && ed.text[at-1] != '\n' {
		// After a last line without its end: the end goes before the new
		// lines, and they end as the text did.
		piece = eol + piece[:len(piece)-len(eol)]
	}
	came := strings.Count(piece, "\n")
	res := EditResult{Index: i, Matched: "insert", Replacements: 1, FirstLine: n + 1, LastLine: n + came}
	for r := range ed.ranges {
		if ed.ranges[r].FirstLine > n {
			ed.ranges[r].FirstLine += came
			ed.ranges[r].LastLine += came
		}
	}
	out := make([]byte, 0, len(ed.text)+len(piece))
	ed.text = append(append(append(out, ed.text[:at]...), piece...), ed.text[at:]...)
	ed.ranges = append(ed.ranges, res)
	return res, nil
}

// lineOf is the line, from 1, that offset at is on.
func lineOf(text []byte, at int) int {
	return bytes.Count(text[:min(at, len(text))], []byte("\n")) + 1
}

// shiftError words an edit whose old_text matches the place at span only
// with its indentation changed, where the change cannot be read without
// doubt (match.ErrShift): the place's lines, as read numbers them.
func shiftError(i int, text []byte, span match.Span) error {
	first, last := lineOf(text, span.Start), lineOf(text, max(span.Start, span.End-1))
	var b strings.Builder
	fmt.Fprintf(&b, "edits[%d]: old_text matches lines %d-%d only with its indentation changed, and new_text cannot be re-indented without doubt (old_text's lines are not all shifted alike, or new_text's would be indented less than nothing); nothing was written. Quote the lines as the file has them:\n", i, first, last)
	region := text[span.Start-len(text[:span.Start])+bytes.LastIndexByte(text[:span.Start], '\n')+1:]
	for l := first; l <= last && l-first < maxShown; l++ {
		line, rest, _ := bytes.Cut(region, nl)
		fmt.Fprintf(&b, "%6d\t%s\n", l, bytes.TrimSuffix(line, []byte("\r")))
		region = rest
	}
	if last-first+1 > maxShown {
		fmt.Fprintf(&b, "[… %d lines more]\n", last-first+1-maxShown)
	}
	return errors.New(strings.TrimSuffix(b.String(), "\n"))
}

// maxShown is how many lines of the closest region an error shows.
const maxShown = 12

// notFound words an edit whose old_text is nowhere: the closest region of the
// text, numbered as read numbers lines, and its first line that differs.
func notFound(i int, text, old []byte) error {
	n, ok := match.Closest(text, old)
	if !ok {
		return fmt.Errorf("edits[%d]: old_text is not in the file (it is empty)", i)
	}
	var b strings.Builder
	what := "the file"
	if i == 0 {
		fmt.Fprintf(&b, "edits[%d]: old_text is not in the file. The closest is lines %d-%d:\n", i, n.First, n.Last)
	} else {
		// Not the file on disk: the text as the edits before left it.
		before := "edits[0]"
		if i > 1 {
			before = fmt.Sprintf("edits[0]-edits[%d]", i-1)
		}
		fmt.Fprintf(&b, "edits[%d]: old_text is not in the text as %s left it (not yet on disk). The closest is its lines %d-%d:\n", i, before, n.First, n.Last)
		what = "the text"
	}
	region := text[n.Start:]
	for l := n.First; l <= n.Last && l-n.First < maxShown; l++ {
		line, rest, _ := bytes.Cut(region, nl)
		fmt.Fprintf(&b, "%6d\t%s\n", l, bytes.TrimSuffix(line, []byte("\r")))
		region = rest
	}
	if n.Last-n.First+1 > maxShown {
		fmt.Fprintf(&b, "[… %d lines more]\n", n.Last-n.First+1-maxShown)
	}
	if n.Line > 0 {
		fmt.Fprintf(&b, "Line %d differs: %s has %q where old_text has %q", n.Line, what, n.Have, n.Want)
	} else {
		b.WriteString("Its lines are old_text's but for blanks at their ends")
	}
	return fmt.Errorf("%s", b.String())
}
