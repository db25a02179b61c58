package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	before := []byte("a\nb\nc\nd\ne\n")
	after := []byte("x\na\nb\nd\ne\ny\n")
	m := Lines(before, after)
	want := map[int]int{1: 2, 2: 3, 3: 0, 4: 4, 5: 5, 6: 7}
	for n, made := range []bool{true, false, false, false, false, true, false} {
		if m.Made(n+1) != made {
			t.Errorf("line %d after: made %v, want %v", n+1, !made, made)
		}
	}
	for old, nw := range want {
		got, ok := m.Line(old)
		if nw == 0 {
			if ok {
				t.Errorf("line %d: moved to %d, want removed", old, got)
			}
			continue
		}
		if !ok || got != nw {
			t.Errorf("line %d: got %d %v, want %d", old, got, ok, nw)
		}
	}
}

// TestLinesRandom checks the map against the lines themselves: a line
// said to be kept reads the same at its new place, in order, and every
// line of a text that is not changed stays where it was.
func TestLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var a []string
		for range r.IntN(60) {
			a = append(a, string(rune('a'+r.IntN(5))))
		}
		b := append([]string(nil), a...)
		for range r.IntN(6) {
			at := r.IntN(len(b) + 1)
			switch r.IntN(3) {
			case 0:
				b = append(b[:at], append([]string{"new"}, b[at:]...)...)
			case 1:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			default:
				if at < len(b) {
					b[at] = "changed"
				}
			}
		}
		before, after := []byte(join(a)), []byte(join(b))
		m := Lines(before, after)
		last := 0
		kept := 0
		for i := range a {
			n, ok := m.Line(i + 1)
			if !ok {
				continue
			}
			kept++
			if n <= last || n > len(b) || b[n-1] != a[i] {
				t.Fatalf("%q → %q: line %d (%q) mapped to %d", a, b, i+1, a[i], n)
			}
			last = n
		}
		made := 0
		for j := range b {
			if m.Made(j + 1) {
				made++
			}
		}
		if kept+made != len(b) {
			t.Fatalf("%q → %q: %d lines kept and %d made, of %d", a, b, kept, made, len(b))
		}
		if same := join(a) == join(b); same && kept != len(a) {
			t.Fatalf("%q unchanged, but only %d of its lines kept", a, kept)
		}
	}
}

func join(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
