package read

import (
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"
)

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
