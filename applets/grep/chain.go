package grep

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A chain decides whether a line matches, without the regular expression,
// for a pattern that is a run of places, each a set of bytes taken once,
// once or more (+), at most once (?) or any number of times (*):
// func \w+Handler, [a-z]+_[0-9]{3}, "[^"]+", func.*Handler, \berr\b (a \b
// at a place that may not be left out, nor the one before it). Such patterns
// are common in what models search for, and on a line that holds what
// every match must hold, Go's regexp (a backtracker or an NFA, no DFA) is
// most of a search's time. A chain reads each byte of the line once
// (Baeza-Yates and Gonnet's shift-and): bit i of the state is set after a
// byte where the text up to and including it matches the places up to i.
// A place that repeats keeps its bit on a byte of its set; one that may be
// left out passes on the bit before it (runs of them, run times over).
//
// It is exact against the regexp, which reads runes: a set of ASCII bytes
// matches a rune only where the rune is that one byte, and every byte of a
// rune of more than one byte is 0x80 or more. A place may hold bytes of
// 0x80 and more only where its class holds every rune from 0x80 on and it
// repeats (the bytes of any runes, valid or not, are then one or more of
// its runes), and with a place of ASCII that may not be left out between
// it and any other such place (two of them could share one rune's bytes).
type chain struct {
	sets [256]uint64 // the places each byte may be at
	rep  uint64      // the places that repeat
	opt  uint64      // the places that may be left out
	run  int         // the longest run of those
	last uint64      // the last place: the line matches when it is set
	// first is the byte every match starts with, where the first place
	// is one byte that may not be left out, else -1: with no place set,
	// the line is read on from its next one with bytes.IndexByte.
	first int
	// wb are the places a \b comes before: one is entered only at a word
	// boundary. wbEnd says a \b ends the chain.
	wb    uint64
	wbEnd bool
}

// maxChain bounds a chain's places: the bits of a state.
const maxChain = 64

// chainOf is the chain re is, a simplified pattern made to match within
// lines, or nil if it is not one.
func chainOf(re *syntax.Regexp) *chain {
	var places []byteSet
	var rep, opt, wb uint64
	bound := false // a \b before the next place
	// push adds a place, the bit of its \b if one came before it.
	push := func(s byteSet) bool {
		if len(places) == maxChain {
			return false
		}
		places = append(places, s)
		if bound {
			wb |= 1 << (len(places) - 1)
			bound = false
		}
		return true
	}
	// add adds re's places, or says it is not a run of them.
	var add func(re *syntax.Regexp) bool
	add = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpWordBoundary:
			bound = true
			return true
		case syntax.OpCapture:
			return add(re.Sub[0])
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				if !add(sub) {
					return false
				}
			}
			return true
		case syntax.OpLiteral:
			for _, r := range re.Rune {
				s, ok := runeSet(r, re.Flags&syntax.FoldCase != 0)
				if !ok || !push(s) {
					return false
				}
			}
			return true
		case syntax.OpCharClass, syntax.OpAnyCharNotNL:
			s, ok := classSet(re, false)
			return ok && push(s)
		case syntax.OpPlus, syntax.OpStar, syntax.OpQuest:
			repeats := re.Op != syntax.OpQuest
			s, ok := byteSet{}, false
			switch sub := re.Sub[0]; sub.Op {
			case syntax.OpLiteral:
				if len(sub.Rune) == 1 {
					s, ok = runeSet(sub.Rune[0], sub.Flags&syntax.FoldCase != 0)
				}
			case syntax.OpCharClass, syntax.OpAnyCharNotNL:
				s, ok = classSet(sub, repeats)
			}
			if !ok || !push(s) {
				return false
			}
			bit := uint64(1) << (len(places) - 1)
			if repeats {
				rep |= bit
			}
			if re.Op != syntax.OpPlus {
				opt |= bit
			}
			return true
		}
		return false
	}
	if !add(re) || len(places) == 0 {
		return nil
	}
	c := &chain{rep: rep, opt: opt, last: 1 << (len(places) - 1), first: -1, wb: wb, wbEnd: bound}
	// A \b is where two places meet (or a place and an end of the match)
	// only where neither may be left out.
	if wb&(opt|opt<<1) != 0 || bound && opt&c.last != 0 {
		return nil
	}
	if m := places[0].members(2); len(m) == 1 && opt&1 == 0 {
		c.first = int(m[0])
	}
	high, run := false, 0 // a place past ASCII since the last that must be an ASCII byte
	for i := range places {
		switch {
		case places[i][2]|places[i][3] != 0:
			if high {
				return nil
			}
			high = true
		case opt&(1<<i) == 0:
			high = false
		}
		if opt&(1<<i) != 0 {
			run++
			c.run = max(c.run, run)
		} else {
			run = 0
		}
		for b := range 256 {
			if places[i].has(byte(b)) {
				c.sets[b] |= 1 << i
			}
		}
	}
	if c.run == len(places) {
		return nil // it matches an empty line
	}
	return c
}

// runeSet is the bytes of r, or with fold of each rune it folds to, if
// each is one byte: what runeFacts knows of it, where that is one place.
func runeSet(r rune, fold bool) (byteSet, bool) {
	f := runeFacts(r, fold)
	if !f.fixed || !f.precise || len(f.whole) != 1 {
		return byteSet{}, false
	}
	return f.whole[0], true
}

// classSet is the bytes of a class (or of ., every rune but \n): its ASCII
// runes, and where it repeats and holds every rune from 0x80 on, every
// byte from 0x80 on.
func classSet(re *syntax.Regexp, repeats bool) (byteSet, bool) {
	ranges := re.Rune
	if re.Op == syntax.OpAnyCharNotNL {
		ranges = []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	}
	var s byteSet
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= utf8.RuneSelf {
			// The last range, sorted: it must run from 0x80 or before to
			// the last rune.
			if !repeats || lo > utf8.RuneSelf || hi != unicode.MaxRune || i+2 < len(ranges) {
				return s, false
			}
			for b := utf8.RuneSelf; b < 256; b++ {
				s.add(byte(b))
			}
			hi = utf8.RuneSelf - 1
		}
		for r := lo; r <= hi; r++ {
			s.add(byte(r))
		}
	}
	return s, true
}

// match says whether line holds a match.
func (c *chain) match(line []byte) bool {
	d := c.skip(0) // never the last place: a chain matches no empty line
	for i := 0; i < len(line); i++ {
		if d == 0 && c.first >= 0 {
			j := bytes.IndexByte(line[i:], byte(c.first))
			if j < 0 {
				return false
			}
			i += j
		}
		enter := d<<1 | 1
		if c.wb != 0 && !boundary(line, i) {
			enter &^= c.wb
		}
		d = (enter | d&c.rep) & c.sets[line[i]]
		if c.run > 0 {
			d = c.skip(d)
		}
		if d&c.last != 0 && (!c.wbEnd || boundary(line, i+1)) {
			return true
		}
	}
	return false
}

// boundary says whether \b holds before line[i]: a word byte on one side
// and not on the other, as the regexp has it (ASCII words; beyond the
// line's ends, none).
func boundary(line []byte, i int) bool {
	return (i > 0 && syntax.IsWordChar(rune(line[i-1]))) != (i < len(line) && syntax.IsWordChar(rune(line[i])))
}

// skip sets the bit of each place that may be left out after one that is
// set, or at the start of a match (which may start at any byte).
func (c *chain) skip(d uint64) uint64 {
	for range c.run {
		d |= (d<<1 | 1) & c.opt
	}
	return d
}
