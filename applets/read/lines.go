package read

import (
	"bytes"
	"unicode/utf8"

	"toolkit/internal/text"
)

// MaxChars is the longest a shown line gets, in characters.
const MaxChars = text.MaxLineChars

// Line is one line of a file, as the splitter hands it on.
type Line struct {
	Num   int64  // its number, from 1
	Text  []byte // valid UTF-8, at most MaxChars characters, without its terminator
	Chars int64  // characters in the whole line (invalid bytes count one each)
	CRLF  bool   // it ended with "\r\n" (the "\r" is in neither Text nor Chars)
	Bytes int64  // its bytes in the file, terminator included
	// Capped says the line was too long to count to its end: Chars is what
	// was counted.
	Capped bool
	// Partial says the line is shown from a place inside it: its start is
	// further back than a call reads.
	Partial bool
}

// splitter cuts a stream of bytes into lines as it comes, block by block,
// in memory that does not grow with the line: of a line it keeps at most
// MaxChars characters and counts the rest. Lines outside first..last are
// only counted. A line ends at "\n"; invalid UTF-8 becomes U+FFFD, one per
// byte that cannot start a character, even when a character is split
// between two blocks.
type splitter struct {
	first, last int64 // the lines to hand on, inclusive; last may be lowered as it runs
	emit        func(Line)

	line   int64 // the number of the line being read
	text   []byte
	chars  int64
	size   int64
	lastB  byte // the line's last byte so far
	pend   [utf8.UTFMax]byte
	npend  int  // bytes of a character split at the end of the last block
	capped bool // the line being finished was cut short by capLine
}

func newSplitter(first, last int64, emit func(Line)) *splitter {
	return &splitter{first: first, last: last, emit: emit, line: 1}
}

func (s *splitter) wanted() bool { return s.line >= s.first && s.line <= s.last }

// lines is how many lines have ended so far.
func (s *splitter) lines() int64 { return s.line - 1 }

func (s *splitter) write(b []byte) {
	for len(b) > 0 {
		if !s.wanted() {
			b = s.skip(b)
			continue
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.add(b)
			return
		}
		s.add(b[:i])
		s.size++ // the "\n"
		s.finish(true)
		b = b[i+1:]
	}
}

// skip passes over lines that are not wanted, counting them, and returns the
// rest of b: it starts a wanted line, or is empty.
func (s *splitter) skip(b []byte) []byte {
	s.npend = 0 // a character split in a line that is not shown
	// After last, or before first by a whole block: count the line ends.
	if n := int64(bytes.Count(b, nl)); s.line > s.last || s.line+n < s.first {
		s.line += n
		if n > 0 {
			s.size = int64(len(b) - bytes.LastIndexByte(b, '\n') - 1)
		} else {
			s.size += int64(len(b))
		}
		s.lastB = b[len(b)-1]
		return nil
	}
	// Before first: line end by line end up to the first wanted line.
	for len(b) > 0 && s.line < s.first {
		i := bytes.IndexByte(b, '\n')
		s.line++
		s.size, s.lastB = 0, '\n'
		b = b[i+1:]
	}
	return b
}

var nl = []byte{'\n'}

// add takes bytes of the current (wanted) line: no "\n" among them.
func (s *splitter) add(b []byte) {
	if len(b) == 0 {
		return
	}
	s.size += int64(len(b))
	s.lastB = b[len(b)-1]
	if s.npend > 0 {
		// Complete the character split at the end of the last block.
		var buf [2 * utf8.UTFMax]byte
		n := copy(buf[:], s.pend[:s.npend])
		m := copy(buf[n:], b[:min(len(b), utf8.UTFMax)])
		if !utf8.FullRune(buf[:n+m]) {
			s.npend = copy(s.pend[:], buf[:n+m])
			return
		}
		r, size := utf8.DecodeRune(buf[:n+m])
		if r == utf8.RuneError && size == 1 {
			s.char(utf8.RuneError, nil)
			rest := append([]byte(nil), buf[1:n]...)
			s.npend = 0
			s.decode(rest)
			s.decode(b)
			return
		}
		s.char(r, buf[:size])
		b = b[size-n:]
		s.npend = 0
	}
	s.decode(b)
}

// decode takes bytes of the line, keeping text up to MaxChars characters.
func (s *splitter) decode(b []byte) {
	for len(b) > 0 {
		if s.chars >= MaxChars {
			// Past what is shown: only count, holding back a split character.
			cut := len(b)
			for k := 1; k <= min(len(b), utf8.UTFMax-1); k++ {
				if utf8.RuneStart(b[len(b)-k]) {
					if !utf8.FullRune(b[len(b)-k:]) {
						cut = len(b) - k
					}
					break
				}
			}
			s.chars += int64(utf8.RuneCount(b[:cut]))
			s.npend = copy(s.pend[:], b[cut:])
			return
		}
		c := b[0]
		if c < utf8.RuneSelf {
			// A run of ASCII, up to what may still be shown.
			n := 1
			room := int(MaxChars - s.chars)
			for n < len(b) && n < room && b[n] < utf8.RuneSelf {
				n++
			}
			s.text = append(s.text, b[:n]...)
			s.chars += int64(n)
			b = b[n:]
			continue
		}
		if !utf8.FullRune(b) {
			s.npend = copy(s.pend[:], b)
			return
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			s.char(utf8.RuneError, nil)
		} else {
			s.char(r, b[:size])
		}
		b = b[size:]
	}
}

// char adds one character (enc is its encoding; nil for U+FFFD).
func (s *splitter) char(r rune, enc []byte) {
	if s.chars < MaxChars {
		if enc == nil {
			s.text = utf8.AppendRune(s.text, r)
		} else {
			s.text = append(s.text, enc...)
		}
	}
	s.chars++
}

// finish ends the current line.
func (s *splitter) finish(newline bool) {
	if s.npend > 0 {
		// A character cut off by the line's end: each byte is invalid.
		for range s.npend {
			s.char(utf8.RuneError, nil)
		}
		s.npend = 0
	}
	l := Line{Num: s.line, Chars: s.chars, Bytes: s.size, Capped: s.capped}
	if newline && s.lastB == '\r' {
		l.CRLF = true
		l.Chars--
		if s.chars <= MaxChars {
			// The "\r" was kept, as the last character.
			s.text = s.text[:len(s.text)-1]
		}
	}
	l.Text = s.text
	s.emit(l)
	s.line++
	s.text = s.text[:0]
	s.chars, s.size, s.lastB = 0, 0, 0
}

// lineBytes is how many bytes of the line being read have come so far.
func (s *splitter) lineBytes() int64 { return s.size }

// capLine ends the line being read where it is, as one too long to count.
func (s *splitter) capLine() {
	s.npend = 0
	s.capped = true
	s.finish(false)
	s.capped = false
}

// end ends the stream: a last line without "\n" is a line too.
func (s *splitter) end() {
	if s.size > 0 || s.npend > 0 {
		if s.wanted() {
			s.finish(false)
		} else {
			s.line++
		}
	}
}
