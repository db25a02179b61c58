package match

import (
	"bytes"
	"hash/maphash"
	"strings"
)

// Replacement is what to put at span, where old was found at level, for
// new: new in the line endings of the place, and at the indentation level
// re-indented from old's indentation to the place's.
func Replacement(text []byte, span Span, level Level, old, new []byte) []byte {
	if level == Indentation || level == Unicode {
		new = Reindent(text[span.Start:span.End], old, new)
	}
	return lineEnds(new, crlfAt(text, span))
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

// Reindent gives new's lines the indentation the place has where old had
// its own: the place's lines and old's pair up one for one. Spaces for tabs
// (or tabs for spaces) are converted at the width the pairs show; a block
// shifted is shifted the same.
func Reindent(place, old, new []byte) []byte {
	pl, ol := Lines(place), Lines(old)
	type pair struct{ from, to []byte }
	var pairs []pair
	for j := range min(len(pl), len(ol)) {
		o, p := old[ol[j].Start:ol[j].ContentEnd], place[pl[j].Start:pl[j].ContentEnd]
		if len(bytes.TrimSpace(o)) == 0 {
			continue
		}
		pairs = append(pairs, pair{indentOf(o), indentOf(p)})
	}
	if len(pairs) == 0 {
		return new
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
	var out bytes.Buffer
	nl := Lines(new)
	for _, l := range nl {
		line := new[l.Start:l.End]
		ind := indentOf(new[l.Start:l.ContentEnd])
		rest := line[len(ind):]
		switch {
		case len(bytes.TrimSpace(new[l.Start:l.ContentEnd])) == 0:
			out.Write(line)
			continue
		case width > 0 && onlyOf(ind, ' '):
			out.WriteString(strings.Repeat("\t", len(ind)/width) + strings.Repeat(" ", len(ind)%width))
		case width < 0 && onlyOf(ind, '\t'):
			out.WriteString(strings.Repeat(" ", len(ind)*-width))
		default:
			// The longest indentation of old this line starts with, as
			// the place has it.
			best := -1
			for i, p := range pairs {
				if bytes.HasPrefix(ind, p.from) && (best < 0 || len(p.from) > len(pairs[best].from)) {
					best = i
				}
			}
			if best < 0 {
				out.Write(ind)
			} else {
				out.Write(pairs[best].to)
				out.Write(ind[len(pairs[best].from):])
			}
		}
		out.Write(rest)
	}
	return out.Bytes()
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
