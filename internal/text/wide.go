package text

import (
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// NewReader decodes r, text in enc after its BOM, to UTF-8.
func NewReader(r io.Reader, enc Encoding) io.Reader {
	if enc.Unit == 0 {
		return r
	}
	return &wideReader{r: r, unit: enc.Unit, big: enc.Big}
}

// wideReader decodes UTF-16 or UTF-32 (unit 2 or 4 bytes, little- or
// big-endian) to UTF-8. An unpaired surrogate, or a UTF-32 unit that is no
// character, becomes U+FFFD.
type wideReader struct {
	r    io.Reader
	unit int
	big  bool
	in   []byte
	odd  []byte // the bytes of a unit split across reads
	high rune   // a high surrogate waiting for its pair
	out  []byte
	err  error
}

func (u *wideReader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			if u.high != 0 || len(u.odd) > 0 {
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				u.high, u.odd = 0, nil
				continue
			}
			return 0, u.err
		}
		if u.in == nil {
			u.in = make([]byte, 64<<10)
		}
		n, err := u.r.Read(u.in)
		u.err = err
		b := append(u.odd, u.in[:n]...)
		u.odd = nil
		for len(b) >= u.unit {
			u.decode(unitAt(b, u.unit, u.big))
			b = b[u.unit:]
		}
		u.odd = append(u.odd, b...)
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	if len(u.out) == 0 {
		u.out = u.out[:0:0]
	}
	return n, nil
}

// unitAt is the code unit at the start of b.
func unitAt(b []byte, unit int, big bool) rune {
	var c uint32
	for i := range unit {
		k := i
		if big {
			k = unit - 1 - i
		}
		c |= uint32(b[k]) << (8 * i)
	}
	return rune(c)
}

func (u *wideReader) decode(c rune) {
	if u.unit == 4 {
		if !utf8.ValidRune(c) {
			c = utf8.RuneError
		}
		u.out = utf8.AppendRune(u.out, c)
		return
	}
	switch {
	case u.high != 0 && utf16.IsSurrogate(c) && c >= 0xDC00:
		u.out = utf8.AppendRune(u.out, utf16.DecodeRune(u.high, c))
		u.high = 0
		return
	case u.high != 0:
		u.out = utf8.AppendRune(u.out, utf8.RuneError)
		u.high = 0
	}
	switch {
	case c >= 0xD800 && c < 0xDC00:
		u.high = c
	case c >= 0xDC00 && c < 0xE000:
		u.out = utf8.AppendRune(u.out, utf8.RuneError)
	default:
		u.out = utf8.AppendRune(u.out, c)
	}
}

// Decode is b, a whole file's bytes in enc, as UTF-8, without its BOM.
func Decode(b []byte, enc Encoding) []byte {
	b = b[enc.BOM:]
	if enc.Unit == 0 {
		return b
	}
	out, _ := io.ReadAll(NewReader(bytes.NewReader(b), enc))
	return out
}

// Encode is text, UTF-8, in enc with its BOM: Decode's inverse for a file
// that decodes validly. UTF-8 with no BOM is text itself, not a copy.
func Encode(text []byte, enc Encoding) []byte {
	if enc.Unit == 0 && enc.BOM == 0 {
		return text
	}
	out := make([]byte, 0, enc.BOM+len(text)*max(1, enc.Unit))
	switch enc.Unit {
	case 0:
		if enc.BOM > 0 {
			out = append(out, 0xEF, 0xBB, 0xBF)
		}
		return append(out, text...)
	case 2:
		out = appendUnit(out, 0xFEFF, 2, enc.Big)
		for _, r := range string(text) {
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				out = appendUnit(appendUnit(out, r1, 2, enc.Big), r2, 2, enc.Big)
			} else {
				out = appendUnit(out, r, 2, enc.Big)
			}
		}
	default:
		out = appendUnit(out, 0xFEFF, 4, enc.Big)
		for _, r := range string(text) {
			out = appendUnit(out, r, 4, enc.Big)
		}
	}
	return out
}

func appendUnit(b []byte, c rune, unit int, big bool) []byte {
	for i := range unit {
		k := i
		if big {
			k = unit - 1 - i
		}
		b = append(b, byte(uint32(c)>>(8*k)))
	}
	return b
}
