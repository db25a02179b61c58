package grep

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// finder finds the lines of a text that match a pattern. A literal is
// found with bytes.Index. A regular expression is run only on the lines
// that hold one of the literals every match must hold (lits: an
// alternation's several, a case-insensitive literal's lower case, the
// rarest of a concatenation's), when it has them, as ripgrep does; else on
// the whole text.
type finder struct {
	re   *regexp.Regexp // nil for a literal
	lits [][]byte       // what a match must hold one of; nil if nothing is known
	fold bool           // lits are looked for in the text's ASCII lower case
	// multi says a match may span lines (re is then run on the whole text).
	multi bool
}

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
	if literal && (!ignoreCase || isASCII(pattern)) {
		f := &finder{lits: [][]byte{[]byte(pattern)}, fold: ignoreCase}
		if ignoreCase {
			f.lits[0] = lowerASCII(nil, f.lits[0]) // all ASCII
		}
		return f, nil
	}
	expr := pattern
	if literal {
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
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	f := &finder{re: re}
	if n, ok := needOf(tree.Simplify()); ok {
		f.fold = n.fold
		for _, l := range n.lits {
			f.lits = append(f.lits, []byte(l))
		}
	}
	return f, nil
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
	case syntax.OpEndLine:
		// \r?$: the \r is cut from the line shown, as every line's is.
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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// need is what every match of a pattern holds: one of lits, each found as
// it is, or with fold, in the text's ASCII lower case (lits are then in
// lower case).
type need struct {
	lits []string
	fold bool
}

// maxLits bounds an alternation's literals: past it, each line of the
// text would be a candidate anyway.
const maxLits = 16

// needOf is what every match of re holds, if anything is known: a
// literal's bytes; the need of a concatenation's rarest part; the union of
// an alternation's branches (each must have one); a repetition's of at
// least one. A literal matched case-insensitively is its lower case, cut to
// its longest run of letters no character outside ASCII folds to (the
// Kelvin sign folds to k, the long s to s), so that the lower-cased text
// holds it wherever a match is.
func needOf(re *syntax.Regexp) (need, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return need{lits: []string{string(re.Rune)}}, true
		}
		if l := foldable(re.Rune); l != "" {
			return need{lits: []string{l}, fold: true}, true
		}
	case syntax.OpCapture, syntax.OpPlus:
		return needOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needOf(re.Sub[0])
		}
	case syntax.OpConcat:
		var best need
		found := false
		for _, sub := range re.Sub {
			if n, ok := needOf(sub); ok && (!found || n.score() > best.score()) {
				best, found = n, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		var all need
		for _, sub := range re.Sub {
			n, ok := needOf(sub)
			if !ok {
				return need{}, false
			}
			all.fold = all.fold || n.fold
			all.lits = append(all.lits, n.lits...)
		}
		if all.fold {
			// The literals matched as they are are looked for in the lower
			// case too: a line that holds one holds its lower case there.
			for i, l := range all.lits {
				all.lits[i] = lowerString(l)
			}
		}
		slices.Sort(all.lits)
		all.lits = slices.Compact(all.lits)
		if len(all.lits) > maxLits || slices.Contains(all.lits, "") {
			return need{}, false
		}
		return all, true
	}
	return need{}, false
}

// foldable is the longest run of rs, in lower case, of letters and other
// characters whose case folds stay in ASCII; "" if there is none.
func foldable(rs []rune) string {
	best, start := "", 0
	for i := 0; i <= len(rs); i++ {
		if i < len(rs) && rs[i] < utf8.RuneSelf && asciiFold(rs[i]) {
			continue
		}
		if i-start > len(best) {
			best = lowerString(string(rs[start:i]))
		}
		start = i + 1
	}
	return best
}

// asciiFold says every character r folds to is ASCII.
func asciiFold(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerString is s in ASCII lower case.
func lowerString(s string) string { return string(lowerASCII(nil, []byte(s))) }

// score says how few lines a need lets through: its weakest literal's.
// A longer literal of rarer bytes lets fewer through.
func (n need) score() int {
	worst := -1
	for _, l := range n.lits {
		s := 0
		for i := 0; i < len(l); i++ {
			s += byteRarity(l[i])
		}
		if worst < 0 || s < worst {
			worst = s
		}
	}
	return worst
}

// byteRarity is how rare a byte is in source and text: white space and the
// commonest letters and signs least.
func byteRarity(c byte) int {
	switch {
	case strings.IndexByte(" \t\netaoinsrlcdhu.,;()_=", c) >= 0:
		return 1
	case 'a' <= c && c <= 'z':
		return 2
	case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return 3
	}
	return 4
}

// each calls fn for each line of buf that matches, in order: where the
// line starts and ends (without its \n), and where the match in it starts
// and ends. lower is buf in ASCII lower case, for a folded literal. fn
// returns false to stop.
func (f *finder) each(buf, lower []byte, fn func(ls, le, ms, me int) bool) {
	if f.multi {
		f.eachSpan(buf, fn)
		return
	}
	hay := buf
	if f.fold {
		hay = lower
	}
	next := f.nexts()
	pos := 0
	// A line ends at its \n; after a last \n there is no line, and an
	// empty text has none.
	for pos < len(buf) {
		var at int
		if f.lits != nil {
			if at = next(hay, pos); at < 0 {
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
		ms, me := at, at
		if f.re == nil {
			me += len(f.lits[0]) // a literal finder's one literal
		} else {
			// The line on its own: a match must not run into the next one.
			loc := f.re.FindIndex(buf[ls:le])
			if loc == nil {
				pos = le + 1
				continue
			}
			ms, me = ls+loc[0], ls+loc[1]
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

// nexts returns where the next of f's literals is in a text from a
// position on, or -1: each literal's next place is found once, and again
// only once the search has gone past it, so that each is looked for in the
// text once in all.
func (f *finder) nexts() func(hay []byte, pos int) int {
	if len(f.lits) == 1 {
		lit := f.lits[0]
		return func(hay []byte, pos int) int {
			if i := bytes.Index(hay[pos:], lit); i >= 0 {
				return pos + i
			}
			return -1
		}
	}
	at := make([]int, len(f.lits))
	for i := range at {
		at[i] = -2 // not looked for yet
	}
	return func(hay []byte, pos int) int {
		first := -1
		for i, lit := range f.lits {
			if at[i] != -1 && at[i] < pos {
				if j := bytes.Index(hay[pos:], lit); j >= 0 {
					at[i] = pos + j
				} else {
					at[i] = -1
				}
			}
			if at[i] >= 0 && (first < 0 || at[i] < first) {
				first = at[i]
			}
		}
		return first
	}
}

// eachSpan is each for a multi finder: ls and le are the start of a
// match's first line and the end of its last one, and the search goes on
// after that line, so that a line is in one match at most. Each attempt
// starts where the last match's lines end: the search is linear.
func (f *finder) eachSpan(buf []byte, fn func(ls, le, ms, me int) bool) {
	for pos := 0; pos < len(buf); {
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

// any reports whether buf holds a matching line.
func (f *finder) any(buf, lower []byte) bool {
	found := false
	f.each(buf, lower, func(int, int, int, int) bool {
		found = true
		return false
	})
	return found
}

// lowerASCII writes b in ASCII lower case to dst, which it returns.
func lowerASCII(dst, b []byte) []byte {
	dst = append(dst[:0], b...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}
