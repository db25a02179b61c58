package read

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// refLines splits data the obvious way.
func refLines(data []byte) []Line {
	var out []Line
	num := int64(1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		raw, size, newline := data, len(data), false
		if i >= 0 {
			raw, size, newline = data[:i], i+1, true
		}
		l := Line{Num: num, Bytes: int64(size)}
		if newline && len(raw) > 0 && raw[len(raw)-1] == '\r' {
			l.CRLF = true
			raw = raw[:len(raw)-1]
		}
		var text []byte
		for len(raw) > 0 {
			r, n := utf8.DecodeRune(raw)
			if l.Chars < MaxChars {
				text = utf8.AppendRune(text, r)
			}
			l.Chars++
			raw = raw[n:]
		}
		l.Text = text
		out = append(out, l)
		data = data[size:]
		num++
	}
	return out
}

// split runs the splitter over data in blocks of the given sizes.
func split(data []byte, first, last int64, blocks ...int) ([]Line, int64) {
	var got []Line
	s := newSplitter(first, last, func(l Line) {
		l.Text = append([]byte(nil), l.Text...)
		got = append(got, l)
	})
	for _, n := range blocks {
		n = min(n, len(data))
		s.write(data[:n])
		data = data[n:]
	}
	for len(data) > 0 {
		n := min(len(data), 7)
		s.write(data[:n])
		data = data[n:]
	}
	s.end()
	return got, s.lines()
}

func sameLines(t *testing.T, data []byte, got, want []Line) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%q: %d lines, want %d", data, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Num != w.Num || string(g.Text) != string(w.Text) || g.Chars != w.Chars || g.CRLF != w.CRLF || g.Bytes != w.Bytes {
			t.Fatalf("%q: line %d is %+v (text %q), want %+v (text %q)", data, i, g, g.Text, w, w.Text)
		}
	}
}

func TestSplitter(t *testing.T) {
	long := strings.Repeat("é", 3000)
	for name, data := range map[string]string{
		"plain":           "a\nbb\nccc\n",
		"no final nl":     "a\nlast",
		"only newlines":   "\n\n\n",
		"crlf":            "a\r\nb\r\n",
		"lone cr":         "a\rb\n",
		"invalid":         "a\xffb\n\xe2\x82\n",
		"long line":       long + "\n" + "short\n",
		"long crlf":       long + "\r\n",
		"cr at 2000":      strings.Repeat("x", 1999) + "\r\n",
		"empty":           "",
		"split character": "✓✓✓✓\n😀😀\n",
	} {
		t.Run(name, func(t *testing.T) {
			want := refLines([]byte(data))
			for _, blocks := range [][]int{nil, {1, 1, 1, 1, 1}, {5, 3, 1}, {2000, 1, 3}} {
				got, n := split([]byte(data), 1, 1<<62, blocks...)
				sameLines(t, []byte(data), got, want)
				if n != int64(len(want)) {
					t.Fatalf("lines() = %d, want %d", n, len(want))
				}
			}
		})
	}
}

func TestSplitterRange(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	data := []byte(b.String())
	got, n := split(data, 40, 42, 13, 29)
	if n != 100 || len(got) != 3 || got[0].Num != 40 || string(got[2].Text) != "line 42" {
		t.Fatalf("got %d lines of 100 counted %d: %+v", len(got), n, got)
	}
}

// FuzzSplitter: for any bytes, any range and any block boundaries, no panic,
// the lines are the reference's, and every byte of the file is in a line.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), int64(1), int64(10), uint16(1), uint16(2))
	f.Add([]byte("\xe2\x82\xac\n\xff\n"), int64(2), int64(2), uint16(1), uint16(1))
	f.Add(bytes.Repeat([]byte("é"), 2100), int64(1), int64(1), uint16(100), uint16(3))
	f.Add([]byte("\n\n\n"), int64(0), int64(-5), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, first, last int64, a, b uint16) {
		want := refLines(data)
		got, n := split(data, first, last, int(a), int(b))
		if n != int64(len(want)) {
			t.Fatalf("%q: counted %d lines, want %d", data, n, len(want))
		}
		var inRange []Line
		for _, l := range want {
			if l.Num >= first && l.Num <= last {
				inRange = append(inRange, l)
			}
		}
		sameLines(t, data, got, inRange)
		all, _ := split(data, 1, 1<<62, int(b), int(a))
		var total int64
		for _, l := range all {
			total += l.Bytes
		}
		if total != int64(len(data)) {
			t.Fatalf("%q: lines hold %d bytes, the file %d", data, total, len(data))
		}
	})
}

func TestSplitterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	parts := []string{"a", "\n", "\r", "\r\n", "é", "😀", "\xff", "\xe2\x82", strings.Repeat("x", 700)}
	for range 500 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		data := []byte(b.String())
		first := int64(rng.IntN(5))
		last := first + int64(rng.IntN(5))
		want := refLines(data)
		var inRange []Line
		for _, l := range want {
			if l.Num >= first && l.Num <= last {
				inRange = append(inRange, l)
			}
		}
		got, _ := split(data, first, last, rng.IntN(9), rng.IntN(9), rng.IntN(9))
		sameLines(t, data, got, inRange)
	}
}
