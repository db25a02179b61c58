package match

import (
	"bytes"
	"errors"
	"hash/maphash"
	"slices"
	"strings"
)

// Replacement is what to put at span, where old was found at level, for
// new: new in the line endings of the place, and at the indentation level
// re-indented from old's indentation to the place's. An error says the
// shift cannot be read from old without doubt (ErrShift).
func Replacement(text []byte, span Span, level Level, old, new []byte) ([]byte, error) {
	if level == Indentation || level == Unicode {
		var err error
		if new, err = Reindent(text[span.Start:span.End], old, new, true); err != nil {
			return nil, err
		}
	}
	return lineEnds(new, crlfAt(text, span)), nil
}

// crlfAt reports whether the place at span ends its lines with "\r\n": its
// first line end, else the one after it, else the one before.
func crlfAt(text []byte, span Span) bool {
	if i := bytes.IndexByte(text[span.Start:], '\n'); i >= 0 {
		return span.Start+i > 0 && text[span.Start+i-1] == '\r'
	}
	if i := bytes.LastIndexByte(text[:span.Start], '\n'); i > 0 {
		return text[i-1] == '\r'
	}
	return false
}

// lineEnds gives b's line ends as "\r\n" (crlf) or "\n".
func lineEnds(b []byte, crlf bool) []byte {
	lf := bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if !crlf {
		return lf
	}
	return bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
}

// indentOf is the leading blanks of a line.
func indentOf(b []byte) []byte { return b[:len(b)-len(bytes.TrimLeft(b, " \t"))] }

// ErrShift is a quote that matches a place only with its indentation
// changed, where how it changed cannot be read without doubt: its whole
// lines disagree, or new's lines would be indented less than nothing.
// The edit is refused rather than written mis-indented.
var ErrShift = errors.New("its indentation differs from the file's in a way that cannot be read without doubt")

// Reindent gives new's lines the indentation the place has where old had
// its own, the place's lines and old's paired one for one. The shift is
// read from old's whole lines. With midLine, old's first line may be
// quoted from its first character that is not blank (edit's old_text, as
// models quote it), and is taken for a whole one only where it agrees with
// the others; new's first line then takes the place's first line's
// indentation, and the lines after it keep their own indentation relative
// to one another, shifted as old's were. (A patch's lines are whole.)
// Spaces for tabs (or tabs for spaces) are converted at the width the
// pairs show. ErrShift where the shift is not one.
func Reindent(place, old, new []byte, midLine bool) ([]byte, error) {
	pl, ol := Lines(place), Lines(old)
	type pair struct{ from, to []byte }
	var pairs []pair // old's non-blank lines, the first among them when it is
	firstAt := -1
	for j := range min(len(pl), len(ol)) {
		o, p := old[ol[j].Start:ol[j].ContentEnd], place[pl[j].Start:pl[j].ContentEnd]
		if len(bytes.TrimSpace(o)) == 0 {
			continue
		}
		if j == 0 {
			firstAt = len(pairs)
		}
		pairs = append(pairs, pair{indentOf(o), indentOf(p)})
	}
	if len(pairs) == 0 {
		return new, nil
	}
	// Spaces in old for tabs in the place, at some width, or the other way.
	width := 0
	for _, p := range pairs {
		sp, tb := bytes.Count(p.from, []byte(" ")), bytes.Count(p.to, []byte("\t"))
		if onlyOf(p.from, ' ') && onlyOf(p.to, '\t') && tb > 0 && sp%tb == 0 {
			width = sp / tb
			break
		}
		if onlyOf(p.from, '\t') && onlyOf(p.to, ' ') {
			if t := len(p.from); t > 0 && len(p.to)%t == 0 {
				width = -len(p.to) / t // negative: tabs to spaces
				break
			}
		}
	}
	// The shift of old's whole lines: one, or none that can be read.
	// Quoted from its first character that is not blank: a first line
	// with no indentation where the place's has some.
	midLine = midLine && firstAt == 0 && len(pairs) > 1 && len(pairs[0].from) == 0 && len(pairs[0].to) > 0
	whole := pairs
	if midLine {
		whole = pairs[1:]
	}
	// Tabs for spaces at a width only where every whole line says so; the
	// width known only where two depths show it (one could be a width and
	// a shift together), else only the depths old's lines have are known.
	depths := map[int]bool{}
	for _, p := range whole {
		if width != 0 && !bytes.Equal(convert(p.from, width), p.to) {
			width = 0
		}
		depths[len(p.from)] = true
	}
	sure := len(depths) > 1
	sh, ok := shiftOf(whole[0].from, whole[0].to)
	for _, p := range whole[1:] {
		if o, k := shiftOf(p.from, p.to); !k || o != sh {
			ok = false
		}
	}
	if !ok && width == 0 {
		return nil, ErrShift
	}
	// The first line, quoted mid-line where it does not shift as the
	// others do: new's first line goes where it is.
	quoted := false
	if midLine {
		f, k := shiftOf(pairs[0].from, pairs[0].to)
		quoted = !k || f != sh
	}
	var out bytes.Buffer
	for k, l := range Lines(new) {
		line := new[l.Start:l.End]
		ind := indentOf(new[l.Start:l.ContentEnd])
		rest := line[len(ind):]
		var to []byte
		switch {
		case len(bytes.TrimSpace(new[l.Start:l.ContentEnd])) == 0:
			out.Write(line)
			continue
		case k == 0 && quoted:
			to = append(slices.Clone(pairs[0].to), bytes.TrimPrefix(ind, pairs[0].from)...)
		case width > 0 && onlyOf(ind, ' '), width < 0 && onlyOf(ind, '\t'):
			if !sure && !depths[len(ind)] {
				return nil, ErrShift
			}
			to = convert(ind, width)
		case !ok:
			return nil, ErrShift
		default:
			moved, k := sh.apply(ind)
			if !k {
				return nil, ErrShift
			}
			to = moved
		}
		if k > 0 && quoted && bytes.Equal(ind, pairs[0].from) && !bytes.Equal(to, pairs[0].to) {
			// At the indentation of old's first line, quoted mid-line:
			// where that line is, or where the others' shift puts it?
			return nil, ErrShift
		}
		out.Write(to)
		out.Write(rest)
	}
	return out.Bytes(), nil
}

// convert gives an indentation of spaces as tabs of width spaces each, or
// one of tabs (width < 0) as -width spaces each.
func convert(ind []byte, width int) []byte {
	if width > 0 {
		return []byte(strings.Repeat("\t", len(ind)/width) + strings.Repeat(" ", len(ind)%width))
	}
	return bytes.Repeat([]byte(" "), len(ind)*-width)
}

// shift is how a block's indentation moved: by n of the blank c (n < 0:
// taken off), the rest of each line's indentation kept.
type shift struct {
	n int
	c byte
}

// shiftOf is the shift from one indentation to another: each made of one
// blank, the same (or one of them empty), else none.
func shiftOf(from, to []byte) (shift, bool) {
	c := byte(' ')
	switch {
	case len(from) > 0:
		c = from[0]
	case len(to) > 0:
		c = to[0]
	}
	if !onlyOf(from, c) || !onlyOf(to, c) {
		return shift{}, false
	}
	n := len(to) - len(from)
	if n == 0 {
		return shift{}, true
	}
	return shift{n, c}, true
}

// apply shifts an indentation: false where it would be less than nothing,
// or holds a blank other than the shift's.
func (s shift) apply(ind []byte) ([]byte, bool) {
	switch {
	case s.n == 0:
		return ind, true
	case !onlyOf(ind, s.c):
		return nil, false // another blank, at a width the quote does not show
	case s.n > 0:
		return append(bytes.Repeat([]byte{s.c}, s.n), ind...), true
	case len(ind) < -s.n:
		return nil, false
	}
	return ind[-s.n:], true
}

func onlyOf(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}

// Near is the part of a text most like old: where it is, and the first
// line where it differs from old.
type Near struct {
	First, Last int    // its lines, from 1
	Start       int    // where line First starts in the text
	Line        int    // the first line that differs, from 1; 0 when none does
	Index       int    // which of old's lines that is, from 1
	Have, Want  string // that line as the text has it, and as old has it
	PastEnd     bool   // the text ends before that line: Have is no line of it
}

// maxNearLines bounds the lines of old that Closest compares: a region of
// more is placed by its first lines.
const maxNearLines = 400

// Closest finds the part of text most like old: the run of lines where most
// of old's lines are, compared without their blanks at either end; or,
// where none is, the line most like old's first line (in the three-letter
// pieces they share). It reads the text a few times, whatever old is.
func Closest(text, old []byte) (Near, bool) {
	tl, ol := Lines(text), Lines(old)
	if len(tl) == 0 || len(ol) == 0 {
		return Near{}, false
	}
	seed := maphash.MakeSeed()
	sum := func(b []byte, l Line) uint64 { return maphash.Bytes(seed, indented(b[l.Start:l.ContentEnd])) }
	th := make([]uint64, len(tl))
	for i, l := range tl {
		th[i] = sum(text, l)
	}
	k := min(len(ol), maxNearLines)
	oh := make([]uint64, k)
	lines := map[uint64][]int{} // where each of old's lines is in old
	for j := range k {
		oh[j] = sum(old, ol[j])
		lines[oh[j]] = append(lines[oh[j]], j)
	}
	// Each text line that is one of old's votes for the start it implies.
	votes := make([]int32, len(tl))
	bestStart, best := 0, 0
	for i, h := range th {
		for _, j := range lines[h] {
			s := i - j
			if s < 0 {
				continue
			}
			votes[s]++
			if v := int(votes[s]); v > best || v == best && s < bestStart {
				bestStart, best = s, v
			}
		}
	}
	if best == 0 {
		bestStart = likestLine(text, tl, old, ol) - firstWord(old, ol)
		bestStart = max(0, bestStart)
	} else {
		bestStart = longestStart(th, oh, votes, best, bestStart)
	}
	n := Near{First: bestStart + 1, Last: min(len(tl), bestStart+len(ol)), Start: int(tl[min(bestStart, len(tl)-1)].Start)}
	for j := range ol {
		if j >= k {
			oh = append(oh, sum(old, ol[j])) // past the lines that voted
		}
		i := bestStart + j
		if i >= len(tl) {
			n.Line, n.Index, n.Have, n.Want = len(tl), j+1, "", string(old[ol[j].Start:ol[j].ContentEnd])
			n.PastEnd = true
			break
		}
		if th[i] != oh[j] {
			n.Line, n.Index = i+1, j+1
			n.Have = string(text[tl[i].Start:tl[i].ContentEnd])
			n.Want = string(old[ol[j].Start:ol[j].ContentEnd])
			break
		}
	}
	return n, true
}

// maxTies bounds the starts of equal votes that longestStart compares.
const maxTies = 1000

// longestStart is, of the starts with the most votes, the one where the
// most of old's first lines are as old has them: the place a reader would
// call nearest, its first difference latest.
func longestStart(th, oh []uint64, votes []int32, best int, first int) int {
	at, longest, ties := first, -1, 0
	for s := first; s < len(votes) && ties < maxTies; s++ {
		if int(votes[s]) != best {
			continue
		}
		ties++
		n := 0
		for n < len(oh) && s+n < len(th) && th[s+n] == oh[n] {
			n++
		}
		if n > longest {
			at, longest = s, n
		}
	}
	return at
}

// firstWord is the index of old's first line that is not blank.
func firstWord(old []byte, ol []Line) int {
	for j, l := range ol {
		if len(bytes.TrimSpace(old[l.Start:l.ContentEnd])) > 0 {
			return j
		}
	}
	return 0
}

// likestLine is the line of text that shares the most three-byte pieces
// with old's first line that is not blank. The pieces are kept as bits of a
// table by a hash of their bytes: a few pieces taken for others change the
// score by a little, and the table is read at memory speed.
func likestLine(text []byte, tl []Line, old []byte, ol []Line) int {
	o := ol[firstWord(old, ol)]
	want := indented(old[o.Start:o.ContentEnd])
	var grams [1 << 16]bool
	gram := func(b []byte) uint32 { return (uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])) * 2654435761 >> 16 }
	for i := 0; i+3 <= len(want); i++ {
		grams[gram(want[i:])] = true
	}
	best, bestScore := 0, -1
	for i, l := range tl {
		line := indented(text[l.Start:l.ContentEnd])
		score := 0
		for j := 0; j+3 <= len(line); j++ {
			if grams[gram(line[j:])] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}
