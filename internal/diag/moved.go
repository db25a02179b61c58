package diag

import (
	"toolkit/internal/diff"
	"toolkit/internal/outcome"
)

// key is what tells two diagnostics apart: all of one but its path.
type key struct {
	line, col, endLine, endCol int
	severity, message, code    string
	source                     string
}

func keyOf(d outcome.Diagnostic) key {
	return key{d.Line, d.Col, d.EndLine, d.EndCol, d.Severity, d.Message, d.Code, d.Source}
}

// Compare splits after, the diagnostics of a file's content after a call,
// into those the call brought and a count of those there before it:
// before's diagnostics are moved through the call's line map (those on a
// line it removed or rewrote are dropped), then matched one for one by
// range, severity, code, source and message. An old error that an
// insertion above moved down is not new; a second instance of an old
// message at another place is.
func Compare(before []outcome.Diagnostic, m diff.LineMap, after []outcome.Diagnostic) (fresh []outcome.Diagnostic, already int) {
	old := map[key]int{}
	for _, d := range before {
		if moved, ok := move(d, m); ok {
			old[keyOf(moved)]++
		}
	}
	for _, d := range after {
		k := keyOf(d)
		if old[k] > 0 {
			old[k]--
			already++
			continue
		}
		fresh = append(fresh, d)
	}
	return fresh, already
}

// move is d at its place after the change m, and false where the change
// removed or rewrote the line it starts or ends on.
func move(d outcome.Diagnostic, m diff.LineMap) (outcome.Diagnostic, bool) {
	line, ok := m.Line(d.Line)
	if !ok {
		return d, false
	}
	if d.EndLine > 0 {
		if d.EndLine, ok = m.Line(d.EndLine); !ok {
			return d, false
		}
	}
	d.Line = line
	return d, true
}

// OnChanged is the diagnostics of after that start on a line the change m
// made or rewrote: what a call is shown when the diagnostics of its file
// before it could not be had.
func OnChanged(after []outcome.Diagnostic, m diff.LineMap) []outcome.Diagnostic {
	var out []outcome.Diagnostic
	for _, d := range after {
		if m.Made(d.Line) {
			out = append(out, d)
		}
	}
	return out
}
