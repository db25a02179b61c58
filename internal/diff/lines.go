package diff

// LineMap says where each line of a text went in a later one: a line a
// change left alone has a place there, a line it removed or rewrote has
// none. Diagnostics of the text before are moved through it, so that an
// old error below an insertion is the same old error, at its new line.
type LineMap struct {
	base   int     // lines before the window, alike in both
	inA    int     // the window's lines in before
	shift  int     // how far a line after the window moved
	window []int32 // for each line of the window in before, its 0-based line in after, or -1
	made   []bool  // for each line of the window in after, whether the change made it
}

// Lines is the line map from before to after: the lines the two begin and
// end with alike are moved without a search, the others by the same
// shortest edit script the diff shows (Myers).
func Lines(before, after []byte) LineMap {
	aw, bw, base := window(before, after)
	a, b := split(aw), split(bw)
	m := LineMap{base: base, inA: len(a), shift: len(b) - len(a), window: make([]int32, len(a)), made: make([]bool, len(b))}
	for i := range m.window {
		m.window[i] = -1
	}
	for _, o := range lineDiff(a, b, base) {
		switch o.kind {
		case ' ':
			m.window[o.a-base] = int32(o.b)
		case '+':
			m.made[o.b-base] = true
		}
	}
	return m
}

// Line is where line n (from 1) of the text before is in the text after,
// and false where the change removed or rewrote it. A line past the end
// of before (a diagnostic at the end of the file) moves as the end does.
func (m LineMap) Line(n int) (int, bool) {
	i := n - 1
	switch {
	case i < m.base:
		return n, true
	case i >= m.base+m.inA:
		return n + m.shift, true
	}
	at := m.window[i-m.base]
	if at < 0 {
		return 0, false
	}
	return int(at) + 1, true
}

// Made says whether line n (from 1) of the text after is one the change
// added or rewrote.
func (m LineMap) Made(n int) bool {
	i := n - 1 - m.base
	return i >= 0 && i < len(m.made) && m.made[i]
}
