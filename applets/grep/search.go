package grep

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// finder finds the lines of a text that match a pattern. The regular
// expression runs only on the lines that hold what every match must hold
// (need, and each of the other sets), as ripgrep does, and not at all
// when a match is exactly the first of need's class strings found
// (plain); with nothing known, on the whole text.
type finder struct {
	re *regexp.Regexp // nil when plain
	// lit is a literal too long to be a class string (over maxClass
	// bytes), found in a line with bytes.Index in time linear in the line:
	// the expression would step each of its places at each byte of a line
	// of the byte it repeats (12 s for 1,001 bytes in a line of 1 MiB).
	lit []byte
	// chain decides a line short enough to be shown whole (showLine needs
	// no match's place) where the pattern is one; nil where it is not.
	chain *chain
	need  []scanner // one of these is in every match; nil if nothing is known
	plain bool
	// multi says a match may span lines (re is then run on the whole text).
	multi bool

	// Where a match must hold several class strings (sets: need first,
	// then one of each of the others), the lines are found by one set
	// (the driver), the others checked on each. The byte table picks
	// need, but a tree may be full of what is rare elsewhere ("func" in
	// Go): when the driver's lines mostly lack the others, the next set
	// drives. stats count, for each set, its lines while it drove and
	// those that held the others, for the whole search (its goroutines
	// add theirs after each text).
	sets   [][]scanner
	driver atomic.Int32
	stats  []driveStats
}

// driveStats are a set's lines while it drove, and those that held the
// other sets.
type driveStats struct{ tried, passed atomic.Int64 }

// A driver is given up when, after at least triedEnough of its lines,
// fewer than one in passedOneIn held the other sets.
const (
	triedEnough = 1024
	passedOneIn = 16
)

// newFinder compiles a pattern. fixed takes it as a literal; so is a
// pattern with no metacharacter. A regular expression is made to match
// within one line, whatever it says: no class or . takes the line end, a
// \n in it is refused, and $ matches before a \r\n as before a \n
// (ripgrep's --crlf). A match attempt then never runs on into the lines
// after its own, which would make the search quadratic.
func newFinder(pattern string, fixed, ignoreCase, multiline bool) (*finder, error) {
	if multiline {
		return newMultiFinder(pattern, fixed, ignoreCase)
	}
	literal := fixed || regexp.QuoteMeta(pattern) == pattern
	if literal && !ignoreCase && !utf8.ValidString(pattern) {
		return bytesFinder(pattern)
	}
	expr := pattern
	if fixed {
		expr = regexp.QuoteMeta(pattern)
	}
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err // worded with the pattern as given
	}
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, err
	}
	if tree, err = withinLines(tree); err != nil {
		return nil, err
	}
	f := &finder{}
	simple := tree.Simplify()
	if alts := plainOf(simple); alts != nil {
		f.plain = true
		for _, cs := range alts {
			f.need = append(f.need, newScanner(cs))
		}
		return f, nil
	}
	if f.re, err = regexp.Compile(tree.String()); err != nil {
		return nil, err
	}
	if literal && !ignoreCase && !strings.ContainsRune(pattern, utf8.RuneError) {
		// Not plain, so longer than a class string. (A U+FFFD in it would
		// match an invalid byte too, as the expression reads a text.)
		f.lit = []byte(pattern)
	} else {
		f.chain = chainOf(simple)
	}
	for _, n := range factsOf(simple).all {
		var ss []scanner
		for _, cs := range n {
			ss = append(ss, newScanner(cs))
		}
		f.sets = append(f.sets, ss)
	}
	if len(f.sets) > 0 {
		f.need = f.sets[0]
	}
	if len(f.sets) < 2 {
		f.sets = nil // need alone drives
	} else {
		f.stats = make([]driveStats, len(f.sets))
	}
	return f, nil
}

// bytesFinder finds a literal that is not UTF-8 (a person's bytes of a
// legacy encoding, from the command line), which no regular expression
// can say: as its bytes, up to maxClass of them.
func bytesFinder(lit string) (*finder, error) {
	if len(lit) > maxClass {
		return nil, fmt.Errorf("a literal that is not UTF-8 is looked for up to %d bytes; this one has %d", maxClass, len(lit))
	}
	cs := make(classString, len(lit))
	for i := 0; i < len(lit); i++ {
		if lit[i] == '\n' {
			return nil, errLineEnd
		}
		cs[i].add(lit[i])
	}
	return &finder{need: []scanner{newScanner(cs)}, plain: true}, nil
}

// plainOf is the class strings a pattern's matches are, in its order of
// preference, if it is no more than them: the leftmost of them found is
// then the match, and the first of them at a tie.
func plainOf(re *syntax.Regexp) []classString {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		subs = re.Sub
	}
	if len(subs) > maxLits {
		return nil
	}
	var out []classString
	for _, sub := range subs {
		f := factsOf(sub)
		if !f.fixed || !f.precise || len(f.whole) == 0 || len(f.whole) > maxClass {
			return nil
		}
		out = append(out, f.whole)
	}
	return out
}

// newMultiFinder compiles a pattern whose matches may span lines, as
// ripgrep's --multiline --multiline-dotall: . matches a line end too, ^ and
// $ match at the start and end of every line.
func newMultiFinder(pattern string, fixed, ignoreCase bool) (*finder, error) {
	expr := pattern
	if fixed {
		expr = regexp.QuoteMeta(pattern)
	}
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err // worded with the pattern as given
	}
	flags := "(?ms)"
	if ignoreCase {
		flags = "(?msi)"
	}
	re, err := regexp.Compile(flags + expr)
	if err != nil {
		return nil, err
	}
	return &finder{re: re, multi: true}, nil
}

// errLineEnd refuses a pattern that can only match a line end.
var errLineEnd = errors.New("it matches a line end (\\n), and each line is matched on its own; set multiline for a match across lines")

// withinLines rewrites re to match within one line, as newFinder says.
func withinLines(re *syntax.Regexp) (*syntax.Regexp, error) {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\n') {
			return nil, errLineEnd
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var kept []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo > '\n' || hi < '\n' {
				kept = append(kept, lo, hi)
				continue
			}
			if lo < '\n' {
				kept = append(kept, lo, '\n'-1)
			}
			if hi > '\n' {
				kept = append(kept, '\n'+1, hi)
			}
		}
		if len(kept) == 0 {
			return nil, errLineEnd
		}
		re.Rune = kept
	case syntax.OpBeginText:
		// Each line is a text of its own: \A is its start (ripgrep's
		// \Ac finds the c that starts a line).
		re.Op = syntax.OpBeginLine
	case syntax.OpEndLine, syntax.OpEndText:
		// \r?$: the \r is cut from the line shown, as every line's is.
		// Each line is a text of its own: \z is its end (ripgrep's
		// b\z finds the b that ends a line).
		re.Op = syntax.OpEndLine
		cr := &syntax.Regexp{Op: syntax.OpQuest, Sub: []*syntax.Regexp{{Op: syntax.OpLiteral, Rune: []rune{'\r'}}}}
		return &syntax.Regexp{Op: syntax.OpConcat, Sub: []*syntax.Regexp{cr, re}}, nil
	}
	for i, sub := range re.Sub {
		s, err := withinLines(sub)
		if err != nil {
			return nil, err
		}
		re.Sub[i] = s
	}
	return re, nil
}

// each calls fn for each line of buf that matches from the line that
// starts at from on, in order: where the line starts and ends (without its
// \n), and where the match in it starts and ends, on a line longer than
// MaxLine (-1, -1 on a shorter one, which is shown whole: the regexp would
// work out where at a cost). fn returns false to stop.
func (f *finder) each(buf []byte, from int, fn func(ls, le, ms, me int) bool) {
	if f.multi {
		f.eachSpan(buf, from, fn)
		return
	}
	var caches [maxLits]cache
	for i := range caches {
		caches[i] = newCache()
	}
	drive, d := f.need, 0
	var tried, passed int64
	if f.sets != nil {
		d = int(f.driver.Load())
		drive = f.sets[d]
		defer func() { f.learn(d, tried, passed) }()
	}
	pos := from
	// A line ends at its \n; after a last \n there is no line, and an
	// empty text has none.
	for pos < len(buf) {
		at, which := -1, 0
		if drive != nil {
			// The first of the driver's class strings found; at a tie,
			// the first of them.
			for i := range drive {
				if j := drive[i].find(buf, pos, &caches[i]); j >= 0 && (at < 0 || j < at) {
					at, which = j, i
				}
			}
			if at < 0 {
				return
			}
		} else {
			loc := f.re.FindIndex(buf[pos:])
			if loc == nil {
				return
			}
			at = pos + loc[0]
		}
		if at == len(buf) && buf[at-1] == '\n' {
			return // a match of nothing after the last line end
		}
		ls := bytes.LastIndexByte(buf[:at], '\n') + 1
		le := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			le = at + i
		}
		ms, me := -1, -1
		if f.plain {
			if le-ls > MaxLine {
				ms, me = at, at+len(f.need[which].cs) // never cut: plainOf keeps them short
			}
		} else {
			// The line on its own: a match must not run into the next one.
			line := buf[ls:le]
			found := false
			tried++
			if f.holdsOthers(line, d) {
				passed++
				ms, me, found = f.inLine(line)
			}
			if !found {
				pos = le + 1
				continue
			}
			if ms >= 0 {
				ms, me = ls+ms, ls+me
			}
		}
		if !fn(ls, le, ms, me) {
			return
		}
		if le == len(buf) {
			return
		}
		pos = le + 1
	}
}

// inLine finds the first match in one line: the literal, where there is
// one, with bytes.Index, else the expression. On a line of at most
// MaxLine bytes it only says whether there is one (ms and me -1), by the
// chain where the pattern is one.
func (f *finder) inLine(line []byte) (ms, me int, found bool) {
	short := len(line) <= MaxLine
	if f.lit != nil {
		i := bytes.Index(line, f.lit)
		if i < 0 || short {
			return -1, -1, i >= 0
		}
		return i, i + len(f.lit), true
	}
	if short {
		if f.chain != nil {
			return -1, -1, f.chain.match(line)
		}
		return -1, -1, f.re.Match(line)
	}
	if loc := f.re.FindIndex(line); loc != nil {
		return loc[0], loc[1], true
	}
	return -1, -1, false
}

// holdsOthers says whether a line holds one of each set's class strings
// but the driver's, d (which found it). With no sets (need alone), every
// line does.
func (f *finder) holdsOthers(line []byte, d int) bool {
	for i, ss := range f.sets {
		if i != d && !holds(ss, line) {
			return false
		}
	}
	return true
}

// learn adds one text's counts of the driver d's lines; when they mostly
// lacked the others, the next set not yet found wanting drives (if every
// one was, d stays).
func (f *finder) learn(d int, tried, passed int64) {
	if tried == 0 {
		return
	}
	st := &f.stats[d]
	if t, p := st.tried.Add(tried), st.passed.Add(passed); t < triedEnough || p*passedOneIn >= t {
		return
	}
	for i := 1; i < len(f.sets); i++ {
		n := (d + i) % len(f.sets)
		if t, p := f.stats[n].tried.Load(), f.stats[n].passed.Load(); t < triedEnough || p*passedOneIn >= t {
			f.driver.CompareAndSwap(int32(d), int32(n))
			return
		}
	}
}

// eachSpan is each for a multi finder: ls and le are the start of a
// match's first line and the end of its last one, and the search goes on
// after that line, so that a line is in one match at most. Each attempt
// starts where the last match's lines end: the search is linear.
func (f *finder) eachSpan(buf []byte, from int, fn func(ls, le, ms, me int) bool) {
	for pos := from; pos < len(buf); {
		loc := f.re.FindIndex(buf[pos:])
		if loc == nil {
			return
		}
		ms, me := pos+loc[0], pos+loc[1]
		if ms == len(buf) && buf[ms-1] == '\n' {
			return // a match of nothing after the last line end
		}
		ls := bytes.LastIndexByte(buf[:ms], '\n') + 1
		last := max(ms, me-1) // the match's last byte: a line end ends its line
		le := len(buf)
		if i := bytes.IndexByte(buf[last:], '\n'); i >= 0 {
			le = last + i
		}
		if !fn(ls, le, ms, me) || le == len(buf) {
			return
		}
		pos = le + 1
	}
}
