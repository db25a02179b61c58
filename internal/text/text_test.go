package text

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// TestRoundTrip: a file in each encoding, decoded to UTF-8 and encoded
// back, is the same bytes, BOM and all: what edit and patch rely on to
// change a UTF-16 file in its encoding.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string // "" for UTF-8
		b    []byte
	}{
		{"", []byte("plain\r\nä €\n")},
		{"", []byte("\xEF\xBB\xBFwith a BOM\n")},
		{"UTF-16LE", []byte{0xFF, 0xFE, 'h', 0, 'i', 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, '\n', 0}}, // hi€😀
		{"UTF-16BE", []byte{0xFE, 0xFF, 0, 'h', 0, 'i', 0x20, 0xAC, 0xD8, 0x3D, 0xDE, 0x00, 0, '\n'}},
		{"UTF-32LE", []byte{0xFF, 0xFE, 0, 0, 'h', 0, 0, 0, 0x00, 0xF6, 0x01, 0, '\n', 0, 0, 0}},
	} {
		name, b := c.name, c.b
		enc := Detect(b, true)
		if enc.Name != name {
			t.Errorf("%q: detected as %q", b, enc.Name)
			continue
		}
		text := Decode(b, enc)
		if !utf8.Valid(text) {
			t.Errorf("%s: decoded to invalid UTF-8 %q", name, text)
		}
		if got := Encode(text, enc); !bytes.Equal(got, b) {
			t.Errorf("%s: % x came back as % x", name, b, got)
		}
	}
	if got := Decode([]byte{0xFF, 0xFE, 'h', 0, 0xAC, 0x20}, Encoding{"UTF-16LE", 2, 2, false}); string(got) != "h€" {
		t.Errorf("UTF-16LE decoded as %q", got)
	}
}

// TestNotTakenForWide: a file that merely starts with a byte-order mark,
// but does not decode in its encoding, is not taken for UTF-16.
func TestNotTakenForWide(t *testing.T) {
	for _, b := range [][]byte{
		{0xFF, 0xFE, 0x00, 0xD8, 'a', 0}, // an unpaired surrogate
		{0xFF, 0xFE, 'a', 0, 'b'},        // half a unit at the end
		{0xFF, 0xFE, 0x01, 0x00},         // a control character
		{0xFE, 0xFF, 0xD8, 0x30},         // a high surrogate that ends the file
	} {
		if enc := Detect(b, true); enc.Unit != 0 {
			t.Errorf("% x taken for %s", b, enc.Name)
		}
	}
}

// FuzzDetect: on any bytes, detection never panics; what it takes for
// UTF-16 or UTF-32 decodes to valid UTF-8 and encodes back to the same
// bytes.
func FuzzDetect(f *testing.F) {
	f.Add([]byte{0xFF, 0xFE, 'h', 0, 'i', 0})
	f.Add([]byte{0xFE, 0xFF, 0xD8, 0x3D, 0xDE, 0x00})
	f.Add([]byte{0xFF, 0xFE, 0, 0, 'h', 0, 0, 0})
	f.Add([]byte("\xEF\xBB\xBFtext"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = LooksBinary(b)
		enc, err := Binary(b[:min(len(b), SniffSize)], int64(len(b)))
		if err != nil || enc.Unit == 0 {
			return
		}
		text := Decode(b, enc)
		if !utf8.Valid(text) {
			t.Fatalf("% x (%s) decoded to invalid UTF-8 %q", b, enc.Name, text)
		}
		if got := Encode(text, enc); !bytes.Equal(got, b) {
			t.Fatalf("% x (%s) came back as % x", b, enc.Name, got)
		}
	})
}

// TestBytes: sizes as read's pictures and history's lines say them.
func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{900: "900 bytes", 412_300: "412 KB", 2_140_000: "2.1 MB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
