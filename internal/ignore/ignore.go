// Package ignore reads ignore files (.gitignore, .ignore, .git/info/exclude)
// and tells which paths they ignore, as git does (gitignore(5)):
//
//   - a blank line, or one starting with #, is no pattern; \# and \! start
//     a pattern with those characters; trailing spaces go unless escaped
//     with \; a trailing \r goes (a file written with CRLF)
//   - ! negates: a path a pattern before it ignored is taken back in (not
//     one inside an ignored directory: the walk never goes in there)
//   - a trailing / matches directories only
//   - a pattern with a / at its start or in its middle is anchored at the
//     ignore file's directory; one without matches a name at any depth
//   - * and ? match anything but /, [...] a class ([!...] and [^...]
//     negated), \ quotes the next character; **/ at the start matches any
//     directories, /** at the end everything inside, /**/ zero or more
//     directories; other ** are *
//
// Within a file the last pattern that matches a path decides; a file in a
// deeper directory decides before one above it (Stack). Patterns are matched
// with github.com/bmatcuk/doublestar/v4, after the rules above turn them
// into its syntax.
package ignore

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Pattern is one line of an ignore file.
type Pattern struct {
	Line    int    // its line in the file, from 1
	Text    string // as written
	Negate  bool   // !pattern
	DirOnly bool   // pattern/
	// glob is the pattern in doublestar's syntax, relative to the file's
	// directory; inside, for a pattern ending in /**, is the part before
	// it: the pattern then matches what is inside what that matches.
	glob   string
	inside string
	// name, for a pattern with no / in it, is its glob for a name: it is
	// matched against the path's last name only, not tried at every depth.
	name string
}

// File is a parsed ignore file.
type File struct {
	// Base is the directory the file's patterns are relative to, from the
	// walk's top, with / between names ("" for the top itself).
	Base     string
	Patterns []Pattern
}

// Parse reads the text of an ignore file in the directory base.
func Parse(base, text string) *File {
	f := &File{Base: base}
	for i, line := range strings.Split(text, "\n") {
		if p, ok := parseLine(line); ok {
			p.Line = i + 1
			f.Patterns = append(f.Patterns, p)
		}
	}
	return f
}

// parseLine turns a line into a pattern, if it holds one.
func parseLine(line string) (Pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	p := Pattern{Text: line}
	if line == "" || line[0] == '#' {
		return p, false
	}
	line = trimTrailingSpace(line)
	switch {
	case strings.HasPrefix(line, "!"):
		p.Negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		p.DirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return p, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	if line == "" {
		return p, false
	}
	glob := toDoublestar(line)
	if !anchored && !strings.Contains(glob, "**") {
		p.name = glob
	}
	if !anchored && !strings.HasPrefix(glob, "**/") {
		glob = "**/" + glob
	}
	if !doublestar.ValidatePattern(glob) {
		// git's wildmatch matches nothing with such a pattern (an unclosed
		// [, a trailing \): nor does toolkit.
		return p, false
	}
	p.glob = glob
	if rest, ok := strings.CutSuffix(glob, "/**"); ok && rest != "**" {
		p.inside = rest
	}
	return p, true
}

// trimTrailingSpace drops the spaces at the end of line that no \ quotes.
func trimTrailingSpace(line string) string {
	end := len(line)
	for end > 0 && line[end-1] == ' ' {
		// Count the backslashes before this space: an odd number quotes it.
		n := 0
		for i := end - 2; i >= 0 && line[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			break
		}
		end--
	}
	return line[:end]
}

// toDoublestar quotes what doublestar reads as special and gitignore does
// not: the braces of its alternatives. A run of stars not a whole path
// element is one star in both.
func toDoublestar(s string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			// A ] first in the class (after ! or ^) is one of its members.
			j := i + 1
			if j < len(s) && (s[j] == '!' || s[j] == '^') {
				j++
			}
			if j < len(s) && s[j] == ']' {
				b.WriteString(s[i:j])
				b.WriteString(`\]`)
				i = j
				continue
			}
		case c == '{' || c == '}':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Match says whether the file's patterns decide about path (from the walk's
// top, with / between names), and if they do, whether they ignore it. path
// is below the file's directory, as a walk meets it: only its length is
// checked, so that a name deep in a tree is not compared again with every
// directory above it.
func (f *File) Match(path string, isDir bool) (decided, ignored bool) {
	rel := path
	if f.Base != "" {
		if len(path) <= len(f.Base) || path[len(f.Base)] != '/' {
			return false, false
		}
		rel = path[len(f.Base)+1:]
	}
	for i := len(f.Patterns) - 1; i >= 0; i-- {
		if f.Patterns[i].Matches(rel, isDir) {
			return true, !f.Patterns[i].Negate
		}
	}
	return false, false
}

// Matches says whether the pattern matches rel, a path from its file's
// directory, whatever its negation.
func (p *Pattern) Matches(rel string, isDir bool) bool {
	if p.glob == "" || p.DirOnly && !isDir {
		return false
	}
	if p.name != "" {
		return doublestar.MatchUnvalidated(p.name, rel[strings.LastIndexByte(rel, '/')+1:])
	}
	if p.inside != "" {
		// X/** matches what is inside what X matches, not X itself.
		for i := len(rel) - 1; i > 0; i-- {
			if rel[i] == '/' && doublestar.MatchUnvalidated(p.inside, rel[:i]) {
				return true
			}
		}
		return false
	}
	return doublestar.MatchUnvalidated(p.glob, rel)
}

// Stack is the ignore files that apply in a directory, the deepest last.
type Stack []*File

// Ignored says whether path (from the walk's top) is ignored: the deepest
// file whose patterns decide about it decides.
func (s Stack) Ignored(path string, isDir bool) bool {
	for _, f := range slices.Backward(s) {
		if decided, ignored := f.Match(path, isDir); decided {
			return ignored
		}
	}
	return false
}
