package grep

//go:generate go run freq_gen.go

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// The prefilter. What every match of a pattern must hold is worked out
// from its syntax as class strings: runs of byte sets, such as
// [a-z]_[0-9][0-9][0-9] for [a-z]+_[0-9]{3}, or {f,F}{a,A}{t,T}{a,A}{l,L}
// for a case-insensitive "fatal". A text is searched for a class string
// from its rarest position (by byteFreq): each byte of a small set with
// bytes.IndexByte, a larger set through a table, and the positions around
// a hit are checked. The regular expression then runs only on the lines
// that hold one, and not at all when the pattern is its class strings.

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

func (s byteSet) union(t byteSet) byteSet {
	for i := range s {
		s[i] |= t[i]
	}
	return s
}

// members are the set's bytes, up to n of them.
func (s *byteSet) members(n int) []byte {
	var out []byte
	for c := 0; c < 256 && len(out) < n; c++ {
		if s.has(byte(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

// freq is how often a byte of the set is in ordinary text, in parts per
// million.
func (s *byteSet) freq() float64 {
	f := 0.0
	for c := range 256 {
		if s.has(byte(c)) {
			f += float64(byteFreq[c])
		}
	}
	return f
}

// classString is a run of byte sets: a text holds it at i when its bytes
// from i are each in the set of their place.
type classString []byteSet

// cost is how often a text holds cs at a given place, taking its places
// as independent.
func (cs classString) cost() float64 {
	p := 1.0
	for i := range cs {
		p *= cs[i].freq() / 1e6
	}
	return p
}

// at says whether hay holds cs at i.
func (cs classString) at(hay []byte, i int) bool {
	if i < 0 || len(hay)-i < len(cs) {
		return false
	}
	for k := range cs {
		if !cs[k].has(hay[i+k]) {
			return false
		}
	}
	return true
}

// need is what every match holds one of.
type need []classString

func (n need) cost() float64 {
	c := 0.0
	for _, cs := range n {
		c += cs.cost()
	}
	return c
}

// facts are what is known of every match of a part of a pattern.
type facts struct {
	// fixed: every match is len(whole) bytes, each in the set of its
	// place; precise: and every such run of bytes is a match.
	fixed, precise bool
	whole          classString
	// prefix and suffix are what every match starts and ends with.
	prefix, suffix classString
	// all are needs every match meets, each of them.
	all []need
}

// unknown is what is known of a part that may match bytes of any length.
var unknown = facts{}

func fixed(cs classString, precise bool) facts {
	f := facts{fixed: true, precise: precise, whole: cs, prefix: cs, suffix: cs}
	if len(cs) > 0 {
		f.all = []need{{cs}}
	}
	return f
}

// maxLits bounds an alternation's class strings: past it, each line of the
// text would be a candidate anyway.
const maxLits = 16

// maxAll bounds the needs kept of a concatenation: the rarest.
const maxAll = 4

// factsOf is what is known of every match of re, a simplified pattern
// made to match within lines (no set holds \n).
func factsOf(re *syntax.Regexp) facts {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return fixed(nil, true)
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return fixed(nil, false) // no bytes, but not every place is one
	case syntax.OpLiteral:
		parts := make([]facts, len(re.Rune))
		for i, r := range re.Rune {
			parts[i] = runeFacts(r, re.Flags&syntax.FoldCase != 0)
		}
		return concatFacts(parts)
	case syntax.OpCharClass:
		var s byteSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return unknown // bytes of more than one width
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r != '\n' {
					s.add(byte(r))
				}
			}
		}
		return fixed(classString{s}, true)
	case syntax.OpCapture:
		return factsOf(re.Sub[0])
	case syntax.OpPlus:
		return repeated(factsOf(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return repeated(factsOf(re.Sub[0]))
		}
	case syntax.OpConcat:
		parts := make([]facts, len(re.Sub))
		for i, sub := range re.Sub {
			parts[i] = factsOf(sub)
		}
		return concatFacts(parts)
	case syntax.OpAlternate:
		parts := make([]facts, len(re.Sub))
		for i, sub := range re.Sub {
			parts[i] = factsOf(sub)
		}
		return alternateFacts(parts)
	}
	return unknown
}

// runeFacts is what is known of a rune matched, with fold, in any case.
func runeFacts(r rune, fold bool) facts {
	if r == utf8.RuneError || r == '\n' {
		return unknown // U+FFFD also matches a byte that is not UTF-8
	}
	forms := []rune{r}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			forms = append(forms, f)
		}
	}
	var enc [][]byte
	for _, f := range forms {
		enc = append(enc, utf8.AppendRune(nil, f))
		if len(enc[len(enc)-1]) != len(enc[0]) {
			return unknown // k and the Kelvin sign
		}
	}
	cs := make(classString, len(enc[0]))
	for _, e := range enc {
		for i, c := range e {
			cs[i].add(c)
		}
	}
	// Forms that differ in one byte at most are their sets' product.
	precise := len(forms) == 1 || len(enc[0]) == 1
	return fixed(cs, precise)
}

// repeated is what is known of one or more matches of a part.
func repeated(f facts) facts {
	return facts{prefix: f.prefix, suffix: f.suffix, all: f.all}
}

// concatFacts is what is known of the parts' matches one after another.
// Fixed parts side by side make one class string; a part that is not
// fixed ends the run with its prefix, and its suffix starts the next.
func concatFacts(parts []facts) facts {
	out := facts{fixed: true, precise: true}
	var run classString
	for _, f := range parts {
		if f.fixed {
			run = append(run, f.whole...)
			out.precise = out.precise && f.precise
			continue
		}
		if out.fixed {
			out.fixed, out.precise = false, false
			out.prefix = slices.Concat(run, f.prefix)
		}
		if cs := slices.Concat(run, f.prefix); len(cs) > 0 {
			out.all = append(out.all, need{cs})
		}
		out.all = append(out.all, f.all...)
		run = slices.Clone(f.suffix)
	}
	if out.fixed {
		return fixed(run, out.precise)
	}
	out.suffix = run
	if len(run) > 0 {
		out.all = append(out.all, need{run})
	}
	return keepRarest(out)
}

// keepRarest keeps f's rarest needs, the rarest first, less those a
// rarer one implies.
func keepRarest(f facts) facts {
	slices.SortStableFunc(f.all, func(a, b need) int {
		switch ca, cb := a.cost(), b.cost(); {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
	var kept []need
	for _, n := range f.all {
		if !slices.ContainsFunc(kept, func(k need) bool { return k.implies(n) }) {
			kept = append(kept, n)
		}
	}
	f.all = kept[:min(len(kept), maxAll)]
	return f
}

// implies says whether a text that meets n meets m: each of n's class
// strings holds one of m's, each of its places a subset of m's there.
func (n need) implies(m need) bool {
	for _, cs := range n {
		if !slices.ContainsFunc(m, cs.holds) {
			return false
		}
	}
	return true
}

// holds says whether every text that holds cs holds sub.
func (cs classString) holds(sub classString) bool {
	for i := 0; i+len(sub) <= len(cs); i++ {
		all := true
		for k := range sub {
			if cs[i+k].union(sub[k]) != sub[k] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// alternateFacts is what is known of a match of one of the parts.
func alternateFacts(parts []facts) facts {
	// Parts of one byte each are one set.
	if all := !slices.ContainsFunc(parts, func(f facts) bool { return !f.fixed || len(f.whole) != 1 }); all {
		var s byteSet
		precise := true
		for _, f := range parts {
			s = s.union(f.whole[0])
			precise = precise && f.precise
		}
		return fixed(classString{s}, precise)
	}
	out := facts{prefix: parts[0].prefix, suffix: parts[0].suffix}
	var n need
	for _, f := range parts {
		out.prefix = common(out.prefix, f.prefix, false)
		out.suffix = common(out.suffix, f.suffix, true)
		if len(f.all) == 0 {
			n = nil
			break
		}
		n = append(n, f.all[0]...) // a part's rarest
		if len(n) > maxLits {
			n = nil
			break
		}
	}
	if n != nil {
		out.all = []need{n}
	}
	return out
}

// common is what a and b both start with (or end with, with atEnd), as
// the union of their sets place by place.
func common(a, b classString, atEnd bool) classString {
	n := min(len(a), len(b))
	if atEnd {
		a, b = a[len(a)-n:], b[len(b)-n:]
	}
	out := make(classString, n)
	for i := range n {
		out[i] = a[i].union(b[i])
	}
	return out
}

// maxClass bounds the places checked around a hit: a longer class string
// is searched for by its rarest maxClass places, so that a text of one
// repeated byte costs at most maxClass checks a byte.
const maxClass = 32

// scanner finds a class string in a text.
type scanner struct {
	cs    classString
	at    int    // the anchor: the rarest place of cs
	keys  []byte // the anchor's bytes, when they are few
	table byteSet
	// run says the table is one run of ASCII bytes from lo to hi (the
	// digits, the lower-case letters), looked for eight bytes at a time.
	run    bool
	lo, hi byte
}

// maxKeys bounds the bytes of an anchor found with bytes.IndexByte.
const maxKeys = 3

func newScanner(cs classString) scanner {
	s := scanner{cs: cs}
	if len(cs) > maxClass {
		// The rarest window, by the sum of its places' logarithms, slid
		// along once: a literal of any length costs a look at each place.
		logs := make([]float64, len(cs))
		for i := range cs {
			logs[i] = math.Log(cs[i].freq())
		}
		sum := 0.0
		for _, l := range logs[:maxClass] {
			sum += l
		}
		best, least := 0, sum
		for i := maxClass; i < len(cs); i++ {
			sum += logs[i] - logs[i-maxClass]
			if sum < least {
				best, least = i-maxClass+1, sum
			}
		}
		s.cs = cs[best : best+maxClass]
	}
	// The anchor is the rarest place whose bytes are few; a place of many
	// bytes, scanned by table, only when it is far rarer.
	few, many := -1, -1
	for i := range s.cs {
		f := s.cs[i].freq()
		if len(s.cs[i].members(maxKeys+1)) <= maxKeys {
			if few < 0 || f < s.cs[few].freq() {
				few = i
			}
		} else if many < 0 || f < s.cs[many].freq() {
			many = i
		}
	}
	if few >= 0 && (many < 0 || s.cs[few].freq() <= 4*s.cs[many].freq()) {
		s.at, s.keys = few, s.cs[few].members(maxKeys)
	} else {
		s.at, s.table = many, s.cs[many]
		s.lo, s.hi, s.run = s.table.asciiRun()
	}
	return s
}

// asciiRun says whether the set is one run of ASCII bytes but NUL, and
// where it starts and ends.
func (s *byteSet) asciiRun() (lo, hi byte, ok bool) {
	n := 0
	for c := range 256 {
		if s.has(byte(c)) {
			if n == 0 {
				lo = byte(c)
			}
			hi, n = byte(c), n+1
		}
	}
	return lo, hi, n > 0 && lo > 0 && hi < 0x80 && int(hi-lo)+1 == n
}

// inRun marks each byte of x (eight bytes, the first the lowest) from lo
// to hi with its top bit, lo > 0 and hi < 0x80: Bit Twiddling Hacks'
// hasbetween, exact for each byte (no carry crosses from one to the next;
// a byte of 0x80 or more is never marked).
func inRun(x uint64, lo, hi byte) uint64 {
	const ones, low7 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	m, n := uint64(lo)-1, uint64(hi)+1
	return (ones*(127+n) - x&low7) & ^x & (x&low7 + ones*(127-m)) & (ones << 7)
}

// cache holds where each of a scanner's keys is next in the text being
// searched: found once, and again only once the search has passed it.
type cache [maxKeys]int

func newCache() cache { return cache{-2, -2, -2} }

// find is where hay next holds the class string at or after pos, or -1.
// Between calls on one text with one cache, pos never goes back.
func (s *scanner) find(hay []byte, pos int, c *cache) int {
	if len(s.keys) == 1 {
		return s.findKey(hay, pos, c)
	}
	for p := pos + s.at; p < len(hay); {
		h := s.anchor(hay, p, c)
		if h < 0 {
			return -1
		}
		if s.cs.at(hay, h-s.at) {
			return h - s.at
		}
		p = h + 1
	}
	return -1
}

// findKey is find for an anchor of one byte: the loop the search spends
// its time in, with nothing between one bytes.IndexByte and the next but
// the check of the class string around the hit.
func (s *scanner) findKey(hay []byte, pos int, c *cache) int {
	// The cache holds the last hit found (or -1: none in the rest of the
	// text): where a search keeps several class strings' next hits, each
	// is looked for once.
	p := pos + s.at
	switch {
	case c[0] == -1:
		return -1
	case c[0] >= p:
		return c[0] - s.at
	}
	key := s.keys[0]
	for p < len(hay) {
		i := bytes.IndexByte(hay[p:], key)
		if i < 0 {
			break
		}
		h := p + i
		if s.cs.at(hay, h-s.at) {
			c[0] = h
			return h - s.at
		}
		p = h + 1
	}
	c[0] = -1
	return -1
}

// anchor is where hay next holds a byte of the anchor at or after p, or -1.
func (s *scanner) anchor(hay []byte, p int, c *cache) int {
	if s.keys == nil {
		i := p
		if s.run {
			for ; i+8 <= len(hay); i += 8 {
				if m := inRun(binary.LittleEndian.Uint64(hay[i:]), s.lo, s.hi); m != 0 {
					return i + bits.TrailingZeros64(m)/8
				}
			}
		}
		for ; i < len(hay); i++ {
			if s.table.has(hay[i]) {
				return i
			}
		}
		return -1
	}
	first := -1
	for k, key := range s.keys {
		if c[k] != -1 && c[k] < p {
			c[k] = -1
			if i := bytes.IndexByte(hay[p:], key); i >= 0 {
				c[k] = p + i
			}
		}
		if c[k] >= 0 && (first < 0 || c[k] < first) {
			first = c[k]
		}
	}
	return first
}

// holds says whether line holds one of scanners' class strings.
func holds(scanners []scanner, line []byte) bool {
	for i := range scanners {
		c := newCache()
		if scanners[i].find(line, 0, &c) >= 0 {
			return true
		}
	}
	return false
}
