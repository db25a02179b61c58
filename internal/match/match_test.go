package match

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLevels(t *testing.T) {
	for name, tc := range map[string]struct {
		text, old string
		level     Level
		places    []string // what each place spans
	}{
		"exact":              {"a\nfoo(x)\nb\n", "foo(x)", Exact, []string{"foo(x)"}},
		"exact twice":        {"x = 1\nx = 1\n", "x = 1", Exact, []string{"x = 1", "x = 1"}},
		"crlf file":          {"a\r\nb\r\nc\r\n", "a\nb\n", LineEndings, []string{"a\r\nb\r\n"}},
		"crlf quote":         {"a\nb\nc\n", "a\r\nb", LineEndings, []string{"a\nb"}},
		"trailing blanks":    {"if x {  \n\treturn\t\n}\n", "if x {\n\treturn\n}", TrailingSpace, []string{"if x {  \n\treturn\t\n}"}},
		"tabs for spaces":    {"func f() {\n\tif x {\n\t\treturn\n\t}\n}\n", "    if x {\n        return\n    }\n", Indentation, []string{"\tif x {\n\t\treturn\n\t}\n"}},
		"block shifted":      {"class A:\n    def f(self):\n        pass\n", "def f(self):\n    pass", Indentation, []string{"    def f(self):\n        pass"}},
		"curly quotes":       {`print("hi") # don't`, `print(“hi”) # don’t`, Unicode, []string{`print("hi") # don't`}},
		"dash and nbsp":      {"a - b\n", "a\u00a0\u2014 b", Unicode, []string{"a - b"}},
		"not there":          {"abc\n", "xyz", Exact, nil},
		"whole lines only":   {"  foo bar\n", "foo", Exact, []string{"foo"}},
		"blank line counts":  {"a\n\nb\n", "a\nb\n", Exact, nil},
		"indentation blanks": {"\ta\n\n\tb\n", "  a\n\n  b", Indentation, []string{"\ta\n\n\tb"}},
		"dash and a blank":   {"x\u2014y \nw\n", "x-y\nw", Unicode, []string{"x\u2014y \nw"}},
		"quotes and a blank": {"say(“hi”) \nend\n", "say(\"hi\")\nend", Unicode, []string{"say(“hi”) \nend"}},
	} {
		t.Run(name, func(t *testing.T) {
			level, spans := Find([]byte(tc.text), []byte(tc.old))
			var got []string
			for _, s := range spans {
				got = append(got, tc.text[s.Start:s.End])
			}
			if len(spans) > 0 && level != tc.level || strings.Join(got, "|") != strings.Join(tc.places, "|") {
				t.Fatalf("Find(%q, %q) = %v %q, want %v %q", tc.text, tc.old, level, got, tc.level, tc.places)
			}
		})
	}
}

// TestFoldBytes: every byte a fold gives is in foldBytes, which mapped's
// shortcut counts on (a look-alike folding to another byte would make it
// miss matches).
func TestFoldBytes(t *testing.T) {
	gives := []string{"\n"} // "\r\n"
	for r := rune(utf8.RuneSelf); r <= 0xFFFF; r++ {
		if a, ok := asciiFor(r); ok {
			gives = append(gives, a)
		}
	}
	for _, g := range gives {
		for _, c := range []byte(g) {
			if !strings.ContainsRune(foldBytes, rune(c)) {
				t.Errorf("a fold gives %q, which foldBytes (%q) does not hold", c, foldBytes)
			}
		}
	}
	if got := string(kept([]byte("func step(ctx, q) - x"))); got != "step(ctx," {
		t.Errorf("kept = %q, want the longest run without fold bytes", got)
	}
}

func TestReplacement(t *testing.T) {
	for name, tc := range map[string]struct{ text, old, new, want string }{
		"crlf kept":         {"a\r\nb\r\nc\r\n", "b\n", "B\nB2\n", "a\r\nB\r\nB2\r\nc\r\n"},
		"lf kept":           {"a\nb\nc\n", "b\r\n", "B\r\n", "a\nB\nc\n"},
		"crlf one line":     {"x = 1\r\ny = 2\r\n", "x = 1", "x = 1\nz = 3", "x = 1\r\nz = 3\r\ny = 2\r\n"},
		"tabs reindented":   {"func f() {\n\tif x {\n\t\treturn\n\t}\n}\n", "    if x {\n        return\n    }\n", "    if y {\n        return 1\n            // deeper\n    }\n", "func f() {\n\tif y {\n\t\treturn 1\n\t\t\t// deeper\n\t}\n}\n"},
		"shift reindented":  {"class A:\n    def f(self):\n        pass\n", "def f(self):\n    pass", "def f(self):\n    return 1", "class A:\n    def f(self):\n        return 1\n"},
		"spaces for tabs":   {"\tif x:\n\t\ty()\n", "    if x:\n        y()", "    if x:\n        z()", "\tif x:\n\t\tz()\n"},
		"untouched outside": {"\xef\xbb\xbfhead\n\xff\xfe tail", "head", "HEAD", "\xef\xbb\xbfHEAD\n\xff\xfe tail"},
	} {
		t.Run(name, func(t *testing.T) {
			text := []byte(tc.text)
			level, spans := Find(text, []byte(tc.old))
			if len(spans) != 1 {
				t.Fatalf("%d places", len(spans))
			}
			s := spans[0]
			repl, err := Replacement(text, s, level, []byte(tc.old), []byte(tc.new))
			if err != nil {
				t.Fatal(err)
			}
			got := string(text[:s.Start]) + string(repl) + string(text[s.End:])
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	text := []byte("package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\tx := 2\n\treturn x\n}\n")
	n, ok := Closest(text, []byte("func b() {\n\tx := 3\n\treturn x\n}\n"))
	if !ok || n.First != 7 || n.Last != 10 || n.Line != 8 || n.Have != "\tx := 2" || n.Want != "\tx := 3" {
		t.Fatalf("got %+v", n)
	}
	// Of places with as many lines in common, the one whose first lines
	// agree longest: the difference named is the line that is really wrong.
	n, _ = Closest([]byte("zero\none\nTWO\n3\n"), []byte("TWO\nmissing\n3\n"))
	if n.First != 3 || n.Line != 4 || n.Index != 2 || n.Have != "3" || n.Want != "missing" {
		t.Fatalf("of equal votes: %+v", n)
	}
	// No line in common: the line most like the first is found.
	n, _ = Closest(text, []byte("fnuc b() {"))
	if n.First != 7 {
		t.Fatalf("by pieces: %+v", n)
	}
}

// BenchmarkClosest is a failed match on a 10 MiB file: the region most like
// what was quoted is found in well under the 100 ms a call may spend on it.
func BenchmarkClosest(b *testing.B) {
	var text bytes.Buffer
	for i := 0; text.Len() < 10<<20; i++ {
		text.WriteString("\tif err := step" + strings.Repeat("x", i%7) + "(ctx, " + string(rune('a'+i%26)) + "); err != nil {\n\t\treturn err\n\t}\n")
	}
	old := []byte("\tif err := stepzz(ctx, q); err != nil {\n\t\treturn fmt.Errorf(\"step: %w\", err)\n\t}\n")
	for b.Loop() {
		start := time.Now()
		if _, ok := Closest(text.Bytes(), old); !ok {
			b.Fatal("nothing")
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/closest")
	}
}

// FuzzFind: on any text and quote, Find never panics; every place it gives
// is inside the text, in order and not overlapping; at the exact level the
// place is the quote; and a replacement changes nothing outside its place
// and holds the new text (in the place's line endings).
func FuzzFind(f *testing.F) {
	for _, s := range [][2]string{
		{"a\nb\nc\n", "b"}, {"a\r\nb\r\n", "a\nb\n"}, {"\tx\n\t\ty\n", "  x\n    y"}, {"“q” – a", `"q" - a`}, {"", "x"}, {"x", "x\n"}, {"\n\n", "\n"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte("NEW\n"))
	}
	f.Fuzz(func(t *testing.T, text, old, new []byte) {
		if len(old) == 0 {
			return
		}
		level, spans := Find(text, old)
		at := 0
		for _, s := range spans {
			if s.Start < at || s.End < s.Start || s.End > len(text) {
				t.Fatalf("Find(%q, %q): place %v after %d", text, old, s, at)
			}
			at = s.End
			if level == Exact && !bytes.Equal(text[s.Start:s.End], old) {
				t.Fatalf("exact place %q is not %q", text[s.Start:s.End], old)
			}
			repl, err := Replacement(text, s, level, old, new)
			if err != nil {
				return // refused: nothing written
			}
			out := append(append(append([]byte(nil), text[:s.Start]...), repl...), text[s.End:]...)
			if !bytes.HasPrefix(out, text[:s.Start]) || !bytes.HasSuffix(out, text[s.End:]) {
				t.Fatalf("bytes outside %v changed", s)
			}
			// new in the line ends of the place (a "\r\r\n" is a "\r" then a
			// line end); re-indented at the levels that compare lines
			// without their blanks.
			if level != Indentation && level != Unicode {
				if !bytes.Equal(repl, lineEnds(new, false)) && !bytes.Equal(repl, lineEnds(new, true)) {
					t.Fatalf("the replacement %q is not %q in other line ends", repl, new)
				}
			} else if !bytes.Contains(repl, bytes.TrimLeft(bytes.ReplaceAll(new, []byte("\r\n"), []byte("\n")), " \t")) && len(bytes.TrimSpace(new)) > 0 && !bytes.Contains(new, []byte("\n")) {
				t.Fatalf("the re-indented %q lost %q", repl, new)
			}
		}
		_, _ = Closest(text, old)
	})
}
