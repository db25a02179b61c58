package read

import (
	"bytes"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// encoding is how a text file's bytes are characters.
type encoding struct {
	name string // "" for UTF-8
	bom  int    // bytes of byte-order mark at the start
	unit int    // 2 or 4 for UTF-16 and UTF-32; 0 for UTF-8
	big  bool
}

// detect tells a file's encoding from its first bytes. A UTF-16 or UTF-32
// byte-order mark counts only when what follows it decodes validly: a file
// that merely starts FF FE is not taken for UTF-16.
func detect(head []byte, whole bool) encoding {
	for _, e := range []struct {
		bom []byte
		enc encoding
	}{
		{[]byte{0xFF, 0xFE, 0, 0}, encoding{"UTF-32LE", 4, 4, false}},
		{[]byte{0, 0, 0xFE, 0xFF}, encoding{"UTF-32BE", 4, 4, true}},
		{[]byte{0xFF, 0xFE}, encoding{"UTF-16LE", 2, 2, false}},
		{[]byte{0xFE, 0xFF}, encoding{"UTF-16BE", 2, 2, true}},
	} {
		if bytes.HasPrefix(head, e.bom) && decodesValidly(head[len(e.bom):], e.enc, whole) {
			return e.enc
		}
	}
	if bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		return encoding{bom: 3}
	}
	return encoding{}
}

// decodesValidly reports whether b, the start of a file after its BOM, is
// text in e: whole units, no unpaired surrogate or unit that is no
// character, no NUL and no control character but the usual white space.
// Unless b is the whole file, its end may cut a unit or a pair.
func decodesValidly(b []byte, e encoding, whole bool) bool {
	if whole && len(b)%e.unit != 0 {
		return false
	}
	b = b[:len(b)-len(b)%e.unit]
	var high rune
	for len(b) >= e.unit {
		c := unitAt(b, e.unit, e.big)
		b = b[e.unit:]
		switch {
		case e.unit == 2 && c >= 0xD800 && c < 0xDC00:
			if high != 0 {
				return false
			}
			high = c
			continue
		case e.unit == 2 && c >= 0xDC00 && c < 0xE000:
			if high == 0 {
				return false
			}
			high = 0
			continue
		case high != 0, !utf8.ValidRune(c), c == 0, unicode.IsControl(c) && !strings.ContainsRune("\t\n\r\f\v", c):
			return false
		}
	}
	return true
}

// looksBinary: a NUL byte, or more than 30 % of the bytes in invalid UTF-8
// (random bytes are about half invalid; a Latin-1 text a few percent).
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				break // a character cut off by the end of the sample
			}
			invalid++
		}
		i += n
	}
	return invalid*10 > len(b)*3
}

// mimeType names the kind of a binary file, as net/http guesses it.
func mimeType(head []byte) string {
	t := http.DetectContentType(head)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return t
}
