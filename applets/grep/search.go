package grep

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// finder finds the lines of a text that match a pattern. A literal is
// found with bytes.Index; a regular expression through the longest literal
// every match must hold, when it has one, and the expression is then run on
// the lines that hold it only.
type finder struct {
	re   *regexp.Regexp // nil for a literal
	lit  []byte         // the literal, or what a match of re must hold; nil if nothing
	fold bool           // the literal is compared ASCII case-insensitively (lit is lower case)
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
		f := &finder{lit: []byte(pattern), fold: ignoreCase}
		if ignoreCase {
			f.lit = bytes.ToLower(f.lit)
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
	return &finder{re: re, lit: required(tree.Simplify())}, nil
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

// required is a literal that every match of re holds, the longest found,
// or nil. Case-folded literals do not count.
func required(re *syntax.Regexp) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []byte(string(re.Rune))
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []byte
		for _, sub := range re.Sub {
			if l := required(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return nil
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
	pos := 0
	// A line ends at its \n; after a last \n there is no line, and an
	// empty text has none.
	for pos < len(buf) {
		var at int
		if f.lit != nil {
			i := bytes.Index(hay[pos:], f.lit)
			if i < 0 {
				return
			}
			at = pos + i
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
		ms, me := at, at+len(f.lit)
		if f.re != nil {
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
