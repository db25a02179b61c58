// Package match finds a piece of text a model quoted in a file, as edit and
// patch need it: exactly if it can, else, level by level, allowing for what
// models get wrong when they quote: line endings, trailing white space,
// indentation (tabs against spaces, a block shifted), and Unicode
// look-alikes (curly quotes, dashes, non-breaking spaces).
//
// Find returns every place of the first level at which old matches at all,
// in the order the levels are tried:
//
//	exact           old occurs as it is
//	line_endings    "\n" and "\r\n" count as one
//	trailing_space  lines compare without their trailing blanks
//	indentation     lines compare without their leading blanks either
//	unicode         look-alikes count as their ASCII characters
//
// The levels from trailing_space on compare whole lines; exact and
// line_endings find old anywhere. A caller decides what several places
// mean (edit refuses them, patch takes the one nearest where the hunk says).
// Replacement gives the text to put in a place: the new text in the line
// endings of the place, and at the indentation level re-indented as the
// place is.
package match

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Level is how loosely a place matched.
type Level int

const (
	Exact Level = iota
	LineEndings
	TrailingSpace
	Indentation
	Unicode
)

var levelNames = [...]string{"exact", "line_endings", "trailing_space", "indentation", "unicode"}

func (l Level) String() string { return levelNames[l] }

// Span is a place in the text, in bytes.
type Span struct{ Start, End int }

// Find returns the places where old is in text, at the first level that has
// any, or no places at all. old must not be empty.
func Find(text, old []byte) (Level, []Span) {
	if spans := exact(text, old); len(spans) > 0 {
		return Exact, spans
	}
	if bytes.Contains(text, []byte("\r\n")) || bytes.Contains(old, []byte("\r\n")) {
		if spans := mapped(text, old, crlfOnly); len(spans) > 0 {
			return LineEndings, spans
		}
	}
	var tl []Line // the text's lines, split once the first level needs them
	textLines := func() []Line {
		if tl == nil {
			tl = Lines(text)
		}
		return tl
	}
	ol := Lines(old)
	if spans := byLines(text, textLines, old, ol, trailing, false); len(spans) > 0 {
		return TrailingSpace, spans
	}
	if spans := byLines(text, textLines, old, ol, indented, false); len(spans) > 0 {
		return Indentation, spans
	}
	if spans := mapped(text, old, lookAlike); len(spans) > 0 {
		return Unicode, spans
	}
	// Look-alikes on lines whose blanks differ too: the last level takes
	// all of them at once, as Codex's last pass and goose's fuzzy match do.
	if spans := byLines(text, textLines, old, ol, loose, true); len(spans) > 0 {
		return Unicode, spans
	}
	return Exact, nil
}

// loose is a line with its look-alikes folded and its blanks at either end
// taken off.
func loose(b []byte) []byte {
	f, _ := folded(b, lookAlike)
	return indented(f)
}

// LineNorm is how a level compares a line (without its line end): patch
// compares whole lines, level by level, with these.
func LineNorm(l Level) func([]byte) []byte {
	switch l {
	case TrailingSpace:
		return trailing
	case Indentation:
		return indented
	case Unicode:
		return loose
	}
	return func(b []byte) []byte { return b }
}

// LineLevels are the levels patch tries, in order, comparing whole lines
// (line ends never count for a line).
var LineLevels = []Level{Exact, TrailingSpace, Indentation, Unicode}

// exact finds every place of old in text, not overlapping.
func exact(text, old []byte) []Span {
	var spans []Span
	for at := 0; ; {
		i := bytes.Index(text[at:], old)
		if i < 0 {
			return spans
		}
		spans = append(spans, Span{at + i, at + i + len(old)})
		at += i + len(old)
	}
}

// Line is one line of a text: where it starts, where its content ends
// (before "\n" or "\r\n") and where it ends (after them). The offsets are
// 32 bits: a text edit and patch take is at most 1 GiB, and a 10 MiB file's
// lines then take 3 MiB of memory, not 6.
type Line struct{ Start, ContentEnd, End int32 }

// Lines splits text into lines.
func Lines(text []byte) []Line {
	lines := make([]Line, 0, bytes.Count(text, []byte("\n"))+1)
	for at := 0; at < len(text); {
		i := bytes.IndexByte(text[at:], '\n')
		if i < 0 {
			lines = append(lines, Line{int32(at), int32(len(text)), int32(len(text))})
			break
		}
		end := at + i
		content := end
		if content > at && text[content-1] == '\r' {
			content--
		}
		lines = append(lines, Line{int32(at), int32(content), int32(end + 1)})
		at = end + 1
	}
	return lines
}

// trailing is b without its trailing blanks, indented without the leading
// ones too. (bytes.TrimRight with a cutset of two builds a set each call,
// which was most of the time a failed match took on a 10 MiB file.)
func trailing(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func indented(b []byte) []byte {
	b = trailing(b)
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// byLines finds old's lines as whole lines of text, each compared through
// norm. Blank lines at old's ends count, as they must be there too. When
// old ends with a line end, the place takes the last line's end with it.
func byLines(text []byte, textLines func() []Line, old []byte, ol []Line, norm func([]byte) []byte, folds bool) []Span {
	if len(ol) == 0 {
		return nil
	}
	withEnd := old[len(old)-1] == '\n'
	// A line that matches holds its wanted line as it is, but for what
	// norm changes: the blanks at its ends, and, where norm folds
	// look-alikes, the bytes a fold gives (kept). Where the longest such
	// run is nowhere in the text, no line can match.
	var longest []byte
	for _, o := range ol {
		probe := norm(old[o.Start:o.ContentEnd])
		if folds {
			probe = kept(probe)
		}
		if len(probe) > len(longest) {
			longest = probe
		}
	}
	if !bytes.Contains(text, longest) {
		return nil
	}
	tl := textLines()
	if len(ol) > len(tl) {
		return nil
	}
	lines := make([][]byte, len(ol))
	for j, o := range ol {
		lines[j] = old[o.Start:o.ContentEnd]
	}
	var spans []Span
	FindLines(text, tl, lines, norm, 0, len(tl), false, func(i int) bool {
		last := tl[i+len(ol)-1]
		end := last.ContentEnd
		if withEnd {
			end = last.End
		}
		spans = append(spans, Span{int(tl[i].Start), int(end)})
		return true
	})
	return spans
}

// mapped finds old in text after both are rewritten by fold, a character at
// a time, and returns the places in text's own bytes.
func mapped(text, old []byte, fold func([]byte) (string, int)) []Span {
	fo, _ := folded(old, fold)
	if len(fo) == 0 || !bytes.Contains(text, kept(fo)) {
		return nil
	}
	ft, moves := folded(text, fold)
	var spans []Span
	for _, s := range exact(ft, fo) {
		spans = append(spans, Span{back(moves, s.Start), back(moves, s.End)})
	}
	return spans
}

// kept is the longest run of folded bytes that no fold gives: a run that
// must be in the text as it is, since a fold gives only the bytes of
// foldBytes. Where it is not in the text, old folded is not in the text
// folded either, and the text need not be folded to know it.
func kept(folded []byte) []byte {
	var longest []byte
	for f := range bytes.FieldsFuncSeq(folded, func(r rune) bool { return strings.ContainsRune(foldBytes, r) }) {
		if len(f) > len(longest) {
			longest = f
		}
	}
	return longest
}

// foldBytes are the bytes a fold may give: "\n" for "\r\n", and those of
// the ASCII characters look-alikes fold to.
const foldBytes = "\n'\"- ."

// move is where a fold changed the text: from out in the folded text and
// in in the text, up to the next move. Inside a fold (in the bytes a fold
// gave), every byte comes from the fold's start.
type move struct {
	out, in int
	inFold  bool
}

// folded is b rewritten by fold, and where the two part. fold changes only
// "\r" and characters past ASCII, so the runs between are passed over, and
// a b that has nothing to fold is returned as it is.
func folded(b []byte, fold func([]byte) (string, int)) ([]byte, []move) {
	var out []byte // nil until the first fold
	var moves []move
	copied := 0 // b[:copied] is in out
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf && b[i] != '\r' {
			i++
			continue
		}
		s, n := fold(b[i:])
		if s == string(b[i:i+n]) {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[copied:i]...)
		moves = append(moves, move{len(out), i, true})
		out = append(out, s...)
		i += n
		copied = i
		moves = append(moves, move{len(out), i, false})
	}
	if out == nil {
		return b, nil
	}
	return append(out, b[copied:]...), moves
}

// back is the offset in the text of offset k in the folded text.
func back(moves []move, k int) int {
	j := sort.Search(len(moves), func(j int) bool { return moves[j].out > k }) - 1
	switch {
	case j < 0:
		return k
	case moves[j].inFold:
		return moves[j].in
	}
	return moves[j].in + k - moves[j].out
}

// crlfOnly folds "\r\n" to "\n".
func crlfOnly(b []byte) (string, int) {
	if len(b) >= 2 && b[0] == '\r' && b[1] == '\n' {
		return "\n", 2
	}
	return string(b[:1]), 1
}

// lookAlike folds "\r\n" to "\n" and the characters models put for ASCII
// ones to those.
func lookAlike(b []byte) (string, int) {
	if b[0] < utf8.RuneSelf {
		return crlfOnly(b)
	}
	r, n := utf8.DecodeRune(b)
	if a, ok := asciiFor(r); ok {
		return a, n
	}
	return string(b[:n]), n
}

// asciiFor is the ASCII a look-alike character stands for: a switch, not
// a map, so that no table is built when toolkit starts.
func asciiFor(r rune) (string, bool) {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032':
		return "'", true
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033':
		return `"`, true
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return "-", true
	case '\u00A0', '\u2002', '\u2003', '\u2007', '\u2009', '\u200A', '\u202F', '\u3000':
		return " ", true
	case '\u2026':
		return "...", true
	}
	return "", false
}

// LookAlikes names the look-alike characters where a place and the quote
// found there differ, each with the ASCII character it stands for:
// `“ ” for ", – for -`. It is "" where they differ in none.
func LookAlikes(place, quote []byte) string {
	in := func(b []byte) map[rune]bool {
		set := map[rune]bool{}
		for _, r := range string(b) {
			if _, ok := asciiFor(r); ok {
				set[r] = true
			}
		}
		return set
	}
	p, q := in(place), in(quote)
	byASCII := map[string][]rune{}
	for _, set := range []map[rune]bool{p, q} {
		for r := range set {
			if p[r] != q[r] {
				a, _ := asciiFor(r)
				byASCII[a] = append(byASCII[a], r)
			}
		}
	}
	var parts []string
	for a, rs := range byASCII {
		slices.Sort(rs)
		var s []string
		for _, r := range rs {
			s = append(s, string(r))
		}
		parts = append(parts, strings.Join(s, " ")+" for "+a)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// FindLines finds want's lines as whole lines of text (its lines tl),
// each compared through norm, starting at lines from..to (to included):
// yield is given each place's first line, in order, and stops the search by
// returning false. With overlap, places may share lines; without, each
// place starts after the one before ends. It reads each line of the text
// once, whatever want is: Knuth, Morris and Pratt's search over the lines'
// hashes, each place found then checked line by line.
func FindLines(text []byte, tl []Line, want [][]byte, norm func([]byte) []byte, from, to int, overlap bool, yield func(int) bool) {
	m := len(want)
	if m == 0 || from < 0 {
		return
	}
	to = min(to, len(tl)-m)
	if from > to {
		return
	}
	seed := maphash.MakeSeed()
	w := make([]uint64, m)
	normed := make([][]byte, m)
	for j, l := range want {
		normed[j] = norm(l)
		w[j] = maphash.Bytes(seed, normed[j])
	}
	// fail[j]: the longest proper prefix of w[:j+1] that is also its suffix.
	fail := make([]int, m)
	for j, k := 1, 0; j < m; j++ {
		for k > 0 && w[j] != w[k] {
			k = fail[k-1]
		}
		if w[j] == w[k] {
			k++
		}
		fail[j] = k
	}
	line := func(i int) []byte { return norm(text[tl[i].Start:tl[i].ContentEnd]) }
	q := 0
	for i := from; i < to+m; i++ {
		h := maphash.Bytes(seed, line(i))
		for q > 0 && w[q] != h {
			q = fail[q-1]
		}
		if w[q] == h {
			q++
		}
		if q < m {
			continue
		}
		start := i - m + 1
		same := true
		for j := range m {
			if !bytes.Equal(line(start+j), normed[j]) {
				same = false
				break
			}
		}
		switch {
		case !same:
			q = fail[q-1]
		case !yield(start):
			return
		case overlap:
			q = fail[q-1]
		default:
			q = 0
		}
	}
}
