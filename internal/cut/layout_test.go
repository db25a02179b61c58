package cut

import (
	"strings"
	"testing"
	"time"
)

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{30 * time.Second: "30 s", 250 * time.Millisecond: "0.25 s", 1500 * time.Millisecond: "1.5 s", 2 * time.Second: "2 s"} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{812: "812 bytes", 12 << 10: "12.0 KiB", 12900000: "12.3 MiB", 3 << 30: "3.0 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestLongLines: a line over text.MaxLineChars characters is cut as read
// cuts one, the others and every line end stay; a text with none is
// returned as it is.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("é", 2500)
	in := "a\n" + long + "\r\n\nb" + long
	out, n := longLines([]byte(in))
	want := "a\n" + strings.Repeat("é", 2000) + "… [line cut: 501 characters]\n\nb" + strings.Repeat("é", 1999) + "… [line cut: 501 characters]"
	if n != 2 || string(out) != want {
		t.Fatalf("%d lines cut:\n%.80q…\nwant\n%.80q…", n, out, want)
	}
	short := []byte("x\n" + strings.Repeat("y", 2000) + "\n")
	if out, n := longLines(short); n != 0 || &out[0] != &short[0] {
		t.Fatalf("a text with no long line: %d cut, copied", n)
	}
}
