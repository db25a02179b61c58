package read

import (
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// skipReader drops the first skip bytes of r (a BOM).
type skipReader struct {
	r    io.Reader
	skip int64
}

func (s *skipReader) Read(p []byte) (int, error) {
	for s.skip > 0 {
		var buf [4]byte
		n, err := s.r.Read(buf[:min(int64(len(buf)), s.skip)])
		s.skip -= int64(n)
		if err != nil {
			return 0, err
		}
	}
	return s.r.Read(p)
}

// utf16Reader decodes UTF-16 to UTF-8; an unpaired surrogate becomes U+FFFD.
type utf16Reader struct {
	r    io.Reader
	big  bool
	in   []byte
	odd  []byte // a byte of a code unit split across reads
	high uint16 // a high surrogate waiting for its pair
	out  []byte
	err  error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
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
			u.in = make([]byte, blockSize)
		}
		n, err := u.r.Read(u.in)
		u.err = err
		b := append(u.odd, u.in[:n]...)
		u.odd = nil
		for len(b) >= 2 {
			c := uint16(b[0]) | uint16(b[1])<<8
			if u.big {
				c = uint16(b[1]) | uint16(b[0])<<8
			}
			b = b[2:]
			switch {
			case u.high != 0 && c >= 0xDC00 && c < 0xE000:
				u.out = utf8.AppendRune(u.out, utf16.DecodeRune(rune(u.high), rune(c)))
				u.high = 0
				continue
			case u.high != 0:
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				u.high = 0
			}
			if c >= 0xD800 && c < 0xDC00 {
				u.high = c
				continue
			}
			if c >= 0xDC00 && c < 0xE000 {
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				continue
			}
			u.out = utf8.AppendRune(u.out, rune(c))
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
