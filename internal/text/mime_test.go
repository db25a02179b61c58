package text

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// netHTTP is net/http's name for the kind of head, less its parameters,
// or "" where it names HTML or XML, which MimeType leaves out.
func netHTTP(head []byte) string {
	if t := bytes.TrimLeft(head, "\t\n\x0c\r "); len(t) > 0 && t[0] == '<' {
		return ""
	}
	kind, _, _ := strings.Cut(http.DetectContentType(head), ";")
	return kind
}

// TestMimeType: the first bytes of each kind net/http knows, and some
// that are of none, are named as net/http names them.
func TestMimeType(t *testing.T) {
	heads := []string{
		"%PDF-1.7\n\x00", "%!PS-Adobe-3.0\x00", "\xFE\xFF\x00a", "\xFF\xFEa\x00", "\xEF\xBB\xBFabc",
		"\x00\x00\x01\x00\x01", "BM\x00\x00", "GIF89a\x01\x00", "RIFF\x10\x00\x00\x00WEBPVP8 ",
		"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "\xFF\xD8\xFF\xE0\x00\x10JFIF", "FORM\x00\x00\x00\x10AIFF",
		"ID3\x04\x00", "OggS\x00\x02", "MThd\x00\x00\x00\x06\x00\x01", "RIFF\x00\x00\x00\x00AVI LIST",
		"RIFF\x24\x00\x00\x00WAVEfmt ", "\x1A\x45\xDF\xA3\x01", "\x00\x01\x00\x00\x00\x0e", "OTTO\x00",
		"ttcf\x00", "wOFF\x00", "wOF2\x00", "\x1F\x8B\x08\x00", "PK\x03\x04\x14\x00", "Rar!\x1A\x07\x00\xcf",
		"Rar!\x1A\x07\x01\x00", "\x00asm\x01\x00\x00\x00", "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom",
		"\x7fELF\x02\x01\x01\x00", "plain text\xff\xfe\xfd", "\x00\x00\x00\x00", "", "caf\xe9 cr\xe8me\x01",
	}
	eot := make([]byte, 40)
	copy(eot[34:], "LP")
	heads = append(heads, string(eot))
	for _, h := range heads {
		if got, want := MimeType([]byte(h)), netHTTP([]byte(h)); got != want {
			t.Errorf("MimeType(%q) = %s; net/http says %s", h, got, want)
		}
	}
}

// FuzzMimeType: any first bytes are named as net/http names them, but
// HTML and XML.
func FuzzMimeType(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("\x00\x00\x00\x14ftypmp41\x00\x00\x00\x00mp41"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, head []byte) {
		want := netHTTP(head)
		if want == "" {
			return
		}
		if got := MimeType(head); got != want {
			t.Fatalf("MimeType(%q) = %s; net/http says %s", head, got, want)
		}
	})
}
