// Package text says what a file's bytes are as text, as read shows them
// and edit and patch change them: UTF-8 (with or without a BOM), UTF-16 or
// UTF-32 with a BOM that decodes validly, or binary.
package text

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SniffSize is how much of a file Detect and LooksBinary look at.
const SniffSize = 8 << 10

// LineCount is how many lines b holds: its line ends, and one more for a
// last line without one.
func LineCount(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// Count words n things of a kind, for the lines toolkit writes: "1 line",
// "12 lines", "1 job".
func Count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// Bytes words a count of bytes as a person reads it, in powers of 1000:
// "900 bytes", "412 KB", "2.1 MB". (cut.Size, for outputs, counts in
// powers of 1024.)
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// MaxLineChars is the longest a line is shown, in characters: read cuts a
// longer one there, and edit's diff cuts one around its change.
const MaxLineChars = 2000

// Encoding is how a text file's bytes are characters.
type Encoding struct {
	Name string // "UTF-16LE" …; "" for UTF-8
	BOM  int    // bytes of byte-order mark at the start
	Unit int    // 2 or 4 for UTF-16 and UTF-32; 0 for UTF-8
	Big  bool   // big-endian
}

// Detect tells a file's encoding from its first bytes (whole: they are all
// of it). A UTF-16 or UTF-32 byte-order mark counts only when what follows
// it decodes validly: a file that merely starts FF FE is not taken for
// UTF-16.
func Detect(head []byte, whole bool) Encoding {
	for _, e := range wideBOMs {
		if bytes.HasPrefix(head, e.bom) && decodesValidly(head[len(e.bom):], e.enc, whole) {
			return e.enc
		}
	}
	if bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		return Encoding{BOM: 3}
	}
	return Encoding{}
}

// wideBOMs are the byte-order marks of UTF-32 and UTF-16, the longer first.
var wideBOMs = [...]struct {
	bom []byte
	enc Encoding
}{
	{[]byte{0xFF, 0xFE, 0, 0}, Encoding{"UTF-32LE", 4, 4, false}},
	{[]byte{0, 0, 0xFE, 0xFF}, Encoding{"UTF-32BE", 4, 4, true}},
	{[]byte{0xFF, 0xFE}, Encoding{"UTF-16LE", 2, 2, false}},
	{[]byte{0xFE, 0xFF}, Encoding{"UTF-16BE", 2, 2, true}},
}

// WideBOM says head begins with a UTF-16 or UTF-32 byte-order mark,
// whether or not what follows decodes: its NULs may be its characters'.
func WideBOM(head []byte) bool {
	for _, e := range wideBOMs {
		if bytes.HasPrefix(head, e.bom) {
			return true
		}
	}
	return false
}

// decodesValidly reports whether b, the start of a file after its BOM, is
// text in e: whole units, no unpaired surrogate or unit that is no
// character, no NUL and no control character but the usual white space.
// Unless b is the whole file, its end may cut a unit or a pair.
func decodesValidly(b []byte, e Encoding, whole bool) bool {
	if whole && len(b)%e.Unit != 0 {
		return false
	}
	b = b[:len(b)-len(b)%e.Unit]
	var high rune
	for len(b) >= e.Unit {
		c := unitAt(b, e.Unit, e.Big)
		b = b[e.Unit:]
		switch {
		case e.Unit == 2 && c >= 0xD800 && c < 0xDC00:
			if high != 0 {
				return false
			}
			high = c
			continue
		case e.Unit == 2 && c >= 0xDC00 && c < 0xE000:
			if high == 0 {
				return false
			}
			high = 0
			continue
		case high != 0, !utf8.ValidRune(c), c == 0, unicode.IsControl(c) && !strings.ContainsRune("\t\n\r\f\v", c):
			return false
		}
	}
	return high == 0 || !whole
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

// LooksBinary: a NUL byte, or more than 30 % of the bytes in invalid UTF-8
// (random bytes are about half invalid; a Latin-1 text a few percent).
func LooksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if utf8.Valid(b) {
		return false // most text: no need to count
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

// MimeType names the kind of a binary file from its first bytes, as
// net/http's DetectContentType names the kinds that are not text (its
// table, without the HTML and XML a binary file is not): a head with no
// control character but tab, line ends, form feed and escape is
// text/plain; anything else unknown application/octet-stream. It is
// written here so that toolkit's every call does not link net/http for it.
func MimeType(head []byte) string {
	head = head[:min(len(head), 512)]
	for _, s := range signatures {
		if len(head) < len(s.magic) {
			continue
		}
		ok := true
		for i := 0; i < len(s.magic); i++ { // bytes, not runes
			m := byte(0xFF)
			if s.mask != "" {
				m = s.mask[i]
			}
			if head[i]&m != s.magic[i] {
				ok = false
				break
			}
		}
		if ok {
			return s.kind
		}
	}
	if isMP4(head) {
		return "video/mp4"
	}
	for _, c := range head {
		if c <= 0x08 || c == 0x0B || 0x0E <= c && c <= 0x1A || 0x1C <= c && c <= 0x1F {
			return "application/octet-stream"
		}
	}
	return "text/plain"
}

// signatures are the first bytes of kinds of files, each byte of magic
// compared under the mask's (all of it where there is no mask).
var signatures = []struct{ magic, mask, kind string }{
	{"%PDF-", "", "application/pdf"},
	{"%!PS-Adobe-", "", "application/postscript"},
	{"\xFE\xFF\x00\x00", "\xFF\xFF\x00\x00", "text/plain"},
	{"\xFF\xFE\x00\x00", "\xFF\xFF\x00\x00", "text/plain"},
	{"\xEF\xBB\xBF\x00", "\xFF\xFF\xFF\x00", "text/plain"},
	{"\x00\x00\x01\x00", "", "image/x-icon"},
	{"\x00\x00\x02\x00", "", "image/x-icon"},
	{"BM", "", "image/bmp"},
	{"GIF87a", "", "image/gif"},
	{"GIF89a", "", "image/gif"},
	{"RIFF\x00\x00\x00\x00WEBPVP", "\xFF\xFF\xFF\xFF\x00\x00\x00\x00\xFF\xFF\xFF\xFF\xFF\xFF", "image/webp"},
	{"\x89PNG\x0D\x0A\x1A\x0A", "", "image/png"},
	{"\xFF\xD8\xFF", "", "image/jpeg"},
	{"FORM\x00\x00\x00\x00AIFF", "\xFF\xFF\xFF\xFF\x00\x00\x00\x00\xFF\xFF\xFF\xFF", "audio/aiff"},
	{"ID3", "", "audio/mpeg"},
	{"OggS\x00", "", "application/ogg"},
	{"MThd\x00\x00\x00\x06", "", "audio/midi"},
	{"RIFF\x00\x00\x00\x00AVI ", "\xFF\xFF\xFF\xFF\x00\x00\x00\x00\xFF\xFF\xFF\xFF", "video/avi"},
	{"RIFF\x00\x00\x00\x00WAVE", "\xFF\xFF\xFF\xFF\x00\x00\x00\x00\xFF\xFF\xFF\xFF", "audio/wave"},
	{"\x1A\x45\xDF\xA3", "", "video/webm"},
	{"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00LP",
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xFF\xFF", "application/vnd.ms-fontobject"},
	{"\x00\x01\x00\x00", "", "font/ttf"},
	{"OTTO", "", "font/otf"},
	{"ttcf", "", "font/collection"},
	{"wOFF", "", "font/woff"},
	{"wOF2", "", "font/woff2"},
	{"\x1F\x8B\x08", "", "application/x-gzip"},
	{"PK\x03\x04", "", "application/zip"},
	{"Rar!\x1A\x07\x00", "", "application/x-rar-compressed"},
	{"Rar!\x1A\x07\x01\x00", "", "application/x-rar-compressed"},
	{"\x00\x61\x73\x6D", "", "application/wasm"},
}

// isMP4 says whether head starts an ISO media file of an MP4 brand.
func isMP4(head []byte) bool {
	if len(head) < 12 {
		return false
	}
	size := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	if len(head) < size || size%4 != 0 || string(head[4:8]) != "ftyp" {
		return false
	}
	for i := 8; i+3 <= size; i += 4 {
		if i == 12 {
			continue // the minor version
		}
		if string(head[i:i+3]) == "mp4" {
			return true
		}
	}
	return false
}

// Binary is what a file is refused for, when it is binary: nil for text.
// head is its first SniffSize bytes, size all of its bytes.
func Binary(head []byte, size int64) (Encoding, error) {
	enc := Detect(head, size <= SniffSize)
	if enc.Unit == 0 && LooksBinary(head[enc.BOM:]) {
		return enc, fmt.Errorf("binary file (%s, %d bytes)", MimeType(head), size)
	}
	return enc, nil
}

// Escape writes a name so that no byte of it can pass for the layout
// around it, as ls -b does: a backslash, control characters and bytes that
// are not UTF-8 as C escapes (\n, \t, \\, \033).
func Escape(name string) string {
	clean := true
	for _, r := range name {
		if r == '\\' || r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && n == 1, unicode.IsControl(r):
			for _, c := range []byte(name[i : i+n]) {
				b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
			}
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}

// CutLine cuts a line longer than MaxLineChars characters to that many,
// starting a little before the byte at, and says how many it left out on
// each side: "[… 120 characters] text… [line cut: 4000 characters]". A
// shorter line is returned as it is.
func CutLine(line string, at int) string {
	if len(line) <= MaxLineChars || utf8.RuneCountInString(line) <= MaxLineChars {
		return line
	}
	from := max(0, min(at, len(line))-MaxLineChars/4)
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	to := from
	for n := 0; to < len(line) && n < MaxLineChars; n++ {
		_, size := utf8.DecodeRuneInString(line[to:])
		to += size
	}
	var b strings.Builder
	if from > 0 {
		fmt.Fprintf(&b, "[… %d characters] ", utf8.RuneCountInString(line[:from]))
	}
	b.WriteString(line[from:to])
	if to < len(line) {
		fmt.Fprintf(&b, "… [line cut: %d characters]", utf8.RuneCountInString(line[to:]))
	}
	return b.String()
}
