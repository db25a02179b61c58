package grep

import (
	"bytes"
	"regexp"
	"regexp/syntax"
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
}

// newFinder compiles a pattern. fixed takes it as a literal; so is a
// pattern with no metacharacter.
func newFinder(pattern string, fixed, ignoreCase bool) (*finder, error) {
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
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + expr)
	if err != nil {
		return nil, err
	}
	f := &finder{re: re}
	if tree, err := syntax.Parse(flags+expr, syntax.Perl); err == nil {
		f.lit = required(tree.Simplify())
	}
	return f, nil
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
	hay := buf
	if f.fold {
		hay = lower
	}
	pos := 0
	// A line ends at its \n; after a last \n there is no line.
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
