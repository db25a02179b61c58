package text

import (
	"io"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// codec is UTF-16 or UTF-32 in enc's byte order, without a BOM; nil for
// UTF-8. An unpaired surrogate, a unit that is no character, or a unit cut
// by the end decodes as U+FFFD.
func (e Encoding) codec() encoding.Encoding {
	switch {
	case e.Unit == 2 && e.Big:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case e.Unit == 2:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case e.Unit == 4 && e.Big:
		return utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)
	case e.Unit == 4:
		return utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)
	}
	return nil
}

// NewReader decodes r, text in enc after its BOM, to UTF-8.
func NewReader(r io.Reader, enc Encoding) io.Reader {
	if c := enc.codec(); c != nil {
		return c.NewDecoder().Reader(r)
	}
	return r
}

// Decode is b, a whole file's bytes in enc, as UTF-8, without its BOM.
func Decode(b []byte, enc Encoding) []byte {
	b = b[enc.BOM:]
	if c := enc.codec(); c != nil {
		b, _ = c.NewDecoder().Bytes(b)
	}
	return b
}

// Encode is text, UTF-8, in enc with its BOM: Decode's inverse for a file
// that decodes validly. UTF-8 with no BOM is text itself, not a copy.
func Encode(text []byte, enc Encoding) []byte {
	if c := enc.codec(); c != nil {
		bom, _ := c.NewEncoder().Bytes([]byte("\uFEFF"))
		b, _ := c.NewEncoder().Bytes(text)
		return append(bom, b...)
	}
	if enc.BOM > 0 {
		return append([]byte("\xEF\xBB\xBF"), text...)
	}
	return text
}
