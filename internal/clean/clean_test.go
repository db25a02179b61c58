package clean

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// cleanAll cleans in as one stream written in the given chunk sizes.
func cleanAll(raw bool, in []byte, chunks ...int) string {
	return cleanWith(&Cleaner{raw: raw}, in, chunks...)
}

func cleanWith(c *Cleaner, in []byte, chunks ...int) string {
	var out bytes.Buffer
	c.w = &out
	for _, n := range chunks {
		n = min(n, len(in))
		c.Write(in[:n])
		in = in[n:]
	}
	c.Write(in)
	c.Flush()
	return out.String()
}

// statesOnly is cleanAll with every byte going through the escape states:
// the reference the pass-through must agree with.
func statesOnly(raw bool, in []byte, chunks ...int) string {
	return cleanWith(&Cleaner{raw: raw, noPassThrough: true}, in, chunks...)
}

func TestClean(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"plain":              {"hello\nworld\n", "hello\nworld\n"},
		"no final newline":   {"hello", "hello"},
		"colour":             {"\x1b[1;31merror\x1b[0m: x\n", "error: x\n"},
		"colour 256":         {"\x1b[38;5;196mred\x1b[m\n", "red\n"},
		"erase line":         {"\x1b[2K\x1b[1Gdone\n", "done\n"},
		"cursor":             {"a\x1b[10;20Hb\x1b[?25lc\x1b[?25h\n", "abc\n"},
		"osc title bel":      {"\x1b]0;my title\x07text\n", "text\n"},
		"osc title st":       {"\x1b]2;title\x1b\\text\n", "text\n"},
		"osc hyperlink":      {"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		"osc unterminated":   {"a\x1b]0;title\nb\n", "a\nb\n"},
		"dcs":                {"\x1bPq#0;2;0;0;0\x1b\\ok\n", "ok\n"},
		"charset":            {"\x1b(Bplain\x1b)0\n", "plain\n"},
		"save restore":       {"\x1b7x\x1b8\n", "x\n"},
		"keypad":             {"\x1b=\x1b>k\n", "k\n"},
		"esc then newline":   {"a\x1b\nb\n", "a\nb\n"},
		"esc esc":            {"a\x1b\x1b[31mb\n", "ab\n"},
		"lone esc at end":    {"abc\x1b", "abc"},
		"csi broken by nl":   {"a\x1b[12\nb\n", "a\nb\n"},
		"csi then utf8":      {"\x1b[1é\n", "é\n"},
		"progress":           {"10%\r50%\r100%\n", "100%\n"},
		"crlf":               {"a\r\nb\r\n", "a\nb\n"},
		"cr cr lf":           {"done\r\r\n", "done\n"},
		"cr at end":          {"50%\r", "50%"},
		"cr then shorter":    {"downloading\rdone\n", "done\n"},
		"cr then escape":     {"50%\r\x1b[K100%\n", "100%\n"},
		"cr keeps lines":     {"one\ntwo\rTWO\nthree\n", "one\nTWO\nthree\n"},
		"cr utf8":            {"abc\ré\n", "é\n"},
		"invalid byte":       {"a\xffb\n", "a\uFFFDb\n"},
		"two invalid":        {"\xff\xfe", "\uFFFD\uFFFD"},
		"truncated utf8":     {"a\xe2\x82", "a\uFFFD\uFFFD"},
		"utf8":               {"héllo wörld ✓ 😀\n", "héllo wörld ✓ 😀\n"},
		"c1 byte":            {"\x9b31m", "\uFFFD31m"},
		"tab bell backspace": {"a\tb\x07c\bd\n", "a\tb\x07c\bd\n"},
		"nul":                {"a\x00b\n", "a\x00b\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := cleanAll(false, []byte(tc.in)); got != tc.want {
				t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// The same stream one byte at a time.
			ones := make([]int, len(tc.in))
			for i := range ones {
				ones[i] = 1
			}
			if got := cleanAll(false, []byte(tc.in), ones...); got != tc.want {
				t.Errorf("clean(%q) byte by byte = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRaw(t *testing.T) {
	in := "\x1b[31mred\x1b[0m 10%\r100%\n\xff"
	if got, want := cleanAll(true, []byte(in), 3, 7), "\x1b[31mred\x1b[0m 10%\r100%\n\uFFFD"; got != want {
		t.Fatalf("raw clean = %q, want %q", got, want)
	}
}

func TestProgressLoopIsOneLine(t *testing.T) {
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "\r%3d%%|%s| %d/10000 [00:0%d<00:00, 9999.99it/s]", i/100, strings.Repeat("#", i/1000), i, i%10)
	}
	b.WriteString("\rdone\n")
	got := cleanAll(false, []byte(b.String()), 4096, 4096, 4096)
	if got != "done\n" {
		t.Fatalf("10,000 progress updates cleaned to %d bytes, %d lines: %.100q", len(got), strings.Count(got, "\n"), got)
	}
}

// TestBoundedMemory feeds pathological streams and checks that the cleaner's
// buffer stays within MaxPending plus a write or two.
func TestBoundedMemory(t *testing.T) {
	chunk := 64 << 10
	bound := MaxPending + 4*chunk
	for name, gen := range map[string]func(i int) []byte{
		"carriage returns":  func(int) []byte { return bytes.Repeat([]byte("x\r"), chunk/2) },
		"unterminated osc":  func(i int) []byte { b := bytes.Repeat([]byte("t"), chunk); copy(b, "\x1b]0;"); return b },
		"one endless line":  func(int) []byte { return bytes.Repeat([]byte("y"), chunk) },
		"endless csi":       func(int) []byte { b := bytes.Repeat([]byte("1;"), chunk/2); copy(b, "\x1b["); return b },
		"invalid utf8":      func(int) []byte { return bytes.Repeat([]byte{0xff}, chunk) },
		"long redrawn line": func(int) []byte { b := bytes.Repeat([]byte("z"), chunk); b[0] = '\r'; return b },
	} {
		t.Run(name, func(t *testing.T) {
			c := New(io.Discard, false)
			for i := range 64 {
				c.Write(gen(i))
				if cap(c.out) > bound {
					t.Fatalf("after %d writes of %d bytes the buffer holds %d bytes (bound %d)", i+1, chunk, cap(c.out), bound)
				}
			}
		})
	}
}

// TestOracles checks that the text of coloured output equals the text of the
// same output without colour, for the tools whose colour a model meets most.
func TestOracles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"alpha.go", "beta.txt", "gamma.sh"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("package main\n// error here\nfunc main() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gamma.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "one")
	if err := os.WriteFile(filepath.Join(dir, "alpha.go"), []byte("package main\n// fixed here\nfunc main() { println(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2][]string{
		"grep":     {{"grep", "-rn", "--color=always", "error", "."}, {"grep", "-rn", "--color=never", "error", "."}},
		"ls":       {{"ls", "-la", "--color=always"}, {"ls", "-la", "--color=never"}},
		"git diff": {{"git", "-c", "color.diff=always", "diff"}, {"git", "-c", "color.diff=never", "diff"}},
		"git log":  {{"git", "-c", "color.ui=always", "log", "--stat", "--decorate"}, {"git", "-c", "color.ui=never", "log", "--stat", "--decorate"}},
	} {
		t.Run(name, func(t *testing.T) {
			run := func(args []string) []byte {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C", "TZ=UTC")
				out, err := cmd.Output()
				if err != nil {
					t.Skipf("%v: %v", args, err)
				}
				return out
			}
			coloured, plain := run(pair[0]), run(pair[1])
			if !bytes.Contains(coloured, []byte("\x1b[")) {
				t.Fatalf("%v printed no colour: %q", pair[0], coloured)
			}
			if got := cleanAll(false, coloured, 5, 17, 3); got != string(plain) {
				t.Errorf("cleaned coloured output differs from the plain one:\n got %q\nwant %q", got, plain)
			}
		})
	}
}

// FuzzClean checks the cleaner's properties on any bytes: no panic; the same
// text however the stream is split; valid UTF-8 out; never longer than the
// input but for U+FFFD's extra bytes; text with no ESC, no CR and valid UTF-8
// unchanged.
func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"plain text\n", "\x1b[1;31mred\x1b[0m\n", "10%\r100%\n", "\x1b]0;t\x07x", "\x1b]8;;u\x1b\\l\x1b]8;;\x1b\\",
		"a\xffb", "\xe2\x82", "😀\r\n", "\x1b", "\x1b[", "\x1bP", "\x1b(B", "\r\r\r", "\x00\x9b",
	} {
		f.Add([]byte(s), uint16(1), uint16(3), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16, raw bool) {
		whole := cleanAll(raw, in)
		split := cleanAll(raw, in, int(a%64), int(b%64), 1)
		if whole != split {
			t.Fatalf("clean(%q) = %q whole but %q split at %d, %d", in, whole, split, a%64, b%64)
		}
		if want := statesOnly(raw, in, int(a%64), int(b%64), 1); whole != want {
			t.Fatalf("clean(%q) = %q, but %q through the states alone", in, whole, want)
		}
		if !utf8.ValidString(whole) {
			t.Fatalf("clean(%q) = %q is not valid UTF-8", in, whole)
		}
		invalid := countInvalid(in)
		if len(whole) > len(in)+2*invalid {
			t.Fatalf("clean(%q) = %q is longer than the input allows", in, whole)
		}
		if !raw && !bytes.ContainsAny(in, "\x1b\r") && utf8.Valid(in) && whole != string(in) {
			t.Fatalf("clean(%q) = %q changed text without escapes", in, whole)
		}
		if raw && utf8.Valid(in) && whole != string(in) {
			t.Fatalf("raw clean(%q) = %q changed valid text", in, whole)
		}
	})
}

func countInvalid(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			n++
		}
		b = b[size:]
	}
	return n
}

func TestRandomChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "😀", "\n", "\r", "\r\n", "\x1b[31m", "\x1b]0;x\x07", "\x1b", "\xff", "\xe2\x82", "\t", " "}
	for range 200 {
		var b strings.Builder
		for range rng.IntN(300) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		in := []byte(b.String())
		whole := cleanAll(false, in)
		if want := statesOnly(false, in); whole != want {
			t.Fatalf("clean(%q) = %q, but %q through the states alone", in, whole, want)
		}
		var chunks []int
		for range 5 {
			chunks = append(chunks, rng.IntN(20))
		}
		if got := cleanAll(false, in, chunks...); got != whole {
			t.Fatalf("clean(%q) = %q whole, %q in chunks %v", in, whole, got, chunks)
		}
	}
}

func BenchmarkClean(b *testing.B) {
	for name, line := range map[string]string{
		"plain":    "2026-12-02T10:00:00Z INFO request handled path=/api/v1/items status=200 dur=3ms\n",
		"coloured": "\x1b[2m2026-12-02T10:00:00Z\x1b[0m \x1b[32mINFO\x1b[0m request handled \x1b[36mpath\x1b[0m=/api/v1/items status=200\n",
		"utf8":     "2026-12-02 Größe: 3 ✓ — Ergebnis überprüft, naïve café façade\n",
	} {
		b.Run(name, func(b *testing.B) {
			chunk := []byte(strings.Repeat(line, (64<<10)/len(line)))
			b.SetBytes(int64(len(chunk)))
			c := New(io.Discard, false)
			for b.Loop() {
				c.Write(chunk)
			}
		})
	}
	b.Run("raw", func(b *testing.B) {
		chunk := bytes.Repeat([]byte("2026-12-02T10:00:00Z INFO request handled path=/api/v1/items\n"), 1000)
		b.SetBytes(int64(len(chunk)))
		c := New(io.Discard, true)
		for b.Loop() {
			c.Write(chunk)
		}
	})
}

// TestEraseIntoHeldBack: a "\r" that erases the held-back line, followed by
// a line end in the same write: the line end is still found.
func TestEraseIntoHeldBack(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, false)
	c.Write([]byte("abcdef"))
	if out.Len() != 0 || string(c.Pending()) != "abcdef" {
		t.Fatalf("first write passed on %q, holds %q", out.String(), c.Pending())
	}
	c.Write([]byte("\rX\nY"))
	if out.String() != "X\n" {
		t.Fatalf("second write passed on %q, want %q", out.String(), "X\n")
	}
	c.Flush()
	if out.String() != "X\nY" {
		t.Fatalf("after the flush: %q", out.String())
	}
}

// TestLastNewline checks the windowed search against the standard one, with
// line ends at and around its 4 KiB window.
func TestLastNewline(t *testing.T) {
	for _, n := range []int{0, 1, 7, 4095, 4096, 4097, 8192, 10000} {
		for _, at := range []int{-1, 0, 1, n / 2, n - 4097, n - 4096, n - 4095, n - 1} {
			p := bytes.Repeat([]byte("x"), n)
			if at >= 0 && at < n {
				p[at] = '\n'
				if at > 3 {
					p[at/3] = '\n' // an earlier one, which must not be the answer
				}
			}
			if got, want := lastNewline(p), bytes.LastIndexByte(p, '\n'); got != want {
				t.Fatalf("lastNewline of %d bytes with a line end at %d = %d, want %d", n, at, got, want)
			}
		}
	}
}

// TestPassThroughAgrees: writes with nothing to clean skip the states,
// and give the text the states give, whatever the lines' lengths around
// MaxPending, what is held back, and the writes' sizes.
func TestPassThroughAgrees(t *testing.T) {
	var b strings.Builder
	for _, n := range []int{0, 1, 100, MaxPending - 1, MaxPending, MaxPending + 1, 3 * MaxPending, 5} {
		b.WriteString(strings.Repeat("z", n))
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("y", MaxPending+3) + "50%\r100%\n" + strings.Repeat("x", 70000) + "\x1b[1mbold\x1b[0m" + strings.Repeat("w", 1000))
	in := []byte(b.String())
	// Each stream ends by going back over its last line: what was held back
	// is erased, what was passed on stays, so the two must agree on which.
	z := func(n int) string { return strings.Repeat("z", n) }
	for _, writes := range [][]string{
		{"a\n" + z(MaxPending)}, {"a\n" + z(MaxPending+1)}, {"a\n" + z(MaxPending-1)},
		{z(MaxPending)}, {z(MaxPending + 1)}, {z(MaxPending - 10), z(10)}, {z(MaxPending - 10), z(11)},
		{z(10), "b\n" + z(5)}, {z(10), "b\n" + z(MaxPending)}, {z(10), "b\n" + z(MaxPending+1)}, {z(10), z(20), "\n"},
	} {
		writes = append(writes, "\rnew\n")
		sizes := make([]int, len(writes)-1)
		for i := range sizes {
			sizes[i] = len(writes[i])
		}
		all := []byte(strings.Join(writes, ""))
		if got, want := cleanAll(false, all, sizes...), statesOnly(false, all, sizes...); got != want {
			t.Fatalf("writes of %d bytes: %d bytes of text, but %d through the states", len(all), len(got), len(want))
		}
	}
	for _, chunk := range []int{len(in), 1 << 16, 100000, 4096, 777} {
		chunks := make([]int, 0, len(in)/chunk+1)
		for range len(in)/chunk + 1 {
			chunks = append(chunks, chunk)
		}
		if got, want := cleanAll(false, in, chunks...), statesOnly(false, in, chunks...); got != want {
			t.Fatalf("in writes of %d: %d bytes of text, but %d through the states", chunk, len(got), len(want))
		}
	}
}

// TestUnfinished: what a stream that stops here leaves unfinished is
// counted from the first byte a fresh stream must see again (a cut
// character's, a sequence's ESC), and Hold writes the rest without it;
// the held bytes, cleaned from their start with what follows, come out whole.
func TestUnfinished(t *testing.T) {
	for _, c := range []struct {
		first, rest string
		held        int
		want        string
	}{
		{"a\xe2\x82", "\xacb\n", 2, "a€b\n"},
		{"x\x1b[3", "1mred\x1b[0m\n", 3, "xred\n"},
		{"x\x1b", "[1mbold\n", 1, "xbold\n"},
		{"x\x1b]0;ti", "tle\x07y\n", 6, "xy\n"},
		{"x\x1b[31m", "red\n", 0, "xred\n"},
		{"plain", " text\n", 0, "plain text\n"},
	} {
		var out bytes.Buffer
		cl := New(&out, false)
		cl.Write([]byte(c.first))
		if got := cl.Unfinished(); got != c.held {
			t.Fatalf("%q: %d unfinished, want %d", c.first, got, c.held)
		}
		if err := cl.Hold(); err != nil {
			t.Fatal(err)
		}
		next := New(&out, false)
		next.Write([]byte(c.first[len(c.first)-c.held:] + c.rest))
		next.Flush()
		if out.String() != c.want {
			t.Fatalf("%q then %q: %q, want %q", c.first, c.rest, out.String(), c.want)
		}
	}
}
