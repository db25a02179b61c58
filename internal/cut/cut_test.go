package cut

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func cutAll(limit int, text []byte, chunks ...int) Result {
	c := New(limit)
	for _, n := range chunks {
		n = min(n, len(text))
		c.Write(text[:n])
		text = text[n:]
	}
	c.Write(text)
	return c.Result()
}

func numbered(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.Bytes()
}

func TestWithinLimit(t *testing.T) {
	text := numbered(10)
	r := cutAll(len(text), text, 7)
	if r.Cut || string(r.Head) != string(text) || r.TotalLines != 10 || r.HeadLines != 10 || r.TotalBytes != int64(len(text)) {
		t.Fatalf("text at the limit: %+v", r)
	}
	r = cutAll(100, []byte("no newline"))
	if r.Cut || r.TotalLines != 1 || string(r.Head) != "no newline" {
		t.Fatalf("short text without a newline: %+v", r)
	}
	r = cutAll(100, nil)
	if r.Cut || r.TotalLines != 0 || r.TotalBytes != 0 {
		t.Fatalf("empty text: %+v", r)
	}
}

func TestCutAtLines(t *testing.T) {
	text := numbered(1000) // "line 1\n" … "line 1000\n": 9893 bytes
	r := cutAll(1000, text, 333, 4096)
	if !r.Cut {
		t.Fatal("not cut")
	}
	if len(r.Head) > 500 || len(r.Tail) > 500 || r.Head[len(r.Head)-1] != '\n' {
		t.Fatalf("head %d bytes, tail %d bytes", len(r.Head), len(r.Tail))
	}
	if !bytes.HasPrefix(text, r.Head) || !bytes.HasSuffix(text, r.Tail) {
		t.Fatal("head or tail is not the text's start or end")
	}
	if !bytes.HasPrefix(r.Tail, []byte("line ")) {
		t.Fatalf("tail does not start at a line: %.20q", r.Tail)
	}
	// line 1..70 are 7-9 bytes: "line 1\n".."line 9\n" (63), "line 10\n".. (9 each)
	if got := int64(bytes.Count(r.Head, []byte("\n"))); r.HeadLines != got {
		t.Fatalf("HeadLines %d, head has %d lines", r.HeadLines, got)
	}
	first := fmt.Sprintf("line %d\n", r.TailFirst)
	if !bytes.HasPrefix(r.Tail, []byte(first)) || r.TotalLines != 1000 {
		t.Fatalf("TailFirst %d but tail starts %.12q; total %d", r.TailFirst, r.Tail, r.TotalLines)
	}
	if r.MidFirst != r.HeadLines+1 || r.MidLast != r.TailFirst-1 {
		t.Fatalf("middle lines %d-%d, head ends at %d, tail starts at %d", r.MidFirst, r.MidLast, r.HeadLines, r.TailFirst)
	}
	if int64(len(r.Head))+r.MidBytes+int64(len(r.Tail)) != r.TotalBytes {
		t.Fatalf("head %d + middle %d + tail %d != total %d", len(r.Head), r.MidBytes, len(r.Tail), r.TotalBytes)
	}
}

func TestFailuresFromTheMiddle(t *testing.T) {
	var b bytes.Buffer
	for i := 1; i <= 5000; i++ {
		switch i {
		case 5: // in the head: not a middle failure
			b.WriteString("error: in the head\n")
		case 1200:
			b.WriteString("src/x.c:10: ERROR: undefined reference\n")
		case 2000:
			b.WriteString("Traceback (most recent call last):\n")
		case 2500:
			b.WriteString("--- FAIL: TestThing (0.01s)\n")
		case 3000:
			b.WriteString("thread 'main' panicked at src/main.rs:2:5\n")
		case 3001:
			b.WriteString("java.lang.NullPointerException: boom\n")
		case 3002:
			b.WriteString("FATAL: database is gone\n")
		case 3003:
			b.WriteString("terrible but fine\n") // no word: "terr-ible" is not "error"
		case 4999:
			b.WriteString("error: in the tail\n")
		default:
			fmt.Fprintf(&b, "ok %d\n", i)
		}
	}
	text := b.Bytes()
	for _, chunks := range [][]int{nil, {1, 2, 3, 5, 8, 13}, {4096, 4096}} {
		r := cutAll(2000, text, chunks...)
		var got []string
		for _, f := range r.Failures {
			got = append(got, fmt.Sprintf("%d:%s", f.Line, f.Text))
		}
		want := []string{
			"1200:src/x.c:10: ERROR: undefined reference",
			"2000:Traceback (most recent call last):",
			"2500:--- FAIL: TestThing (0.01s)",
			"3000:thread 'main' panicked at src/main.rs:2:5",
			"3001:java.lang.NullPointerException: boom",
			"3002:FATAL: database is gone",
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chunks %v: failures\n%s\nwant\n%s", chunks, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestAtMostTwentyFailures(t *testing.T) {
	var b bytes.Buffer
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "error number %d\n", i)
	}
	r := cutAll(400, b.Bytes())
	if len(r.Failures) != MaxFailures || r.Failures[0].Line != r.MidFirst || r.Failures[19].Line != r.MidFirst+19 {
		t.Fatalf("%d failures, first at %d (middle from %d)", len(r.Failures), r.Failures[0].Line, r.MidFirst)
	}
}

func TestLongFailureLineIsCut(t *testing.T) {
	long := "error: " + strings.Repeat("é", 1000) + "\n"
	text := []byte(strings.Repeat("x\n", 600) + long + strings.Repeat("y\n", 600))
	r := cutAll(1000, text, 17)
	if len(r.Failures) != 1 || !r.Failures[0].Cut || len(r.Failures[0].Text) > MaxFailureLine || !utf8.ValidString(r.Failures[0].Text) {
		t.Fatalf("failures %+v", r.Failures)
	}
	if r.Failures[0].Line != 601 {
		t.Fatalf("line %d, want 601", r.Failures[0].Line)
	}
}

func TestOneHugeLine(t *testing.T) {
	text := bytes.Repeat([]byte("é"), 5000) // 10000 bytes, no newline
	r := cutAll(1000, text, 999, 1)
	if !r.Cut || !r.HeadPartial || !r.TailPartial {
		t.Fatalf("%+v", r)
	}
	if !utf8.Valid(r.Head) || !utf8.Valid(r.Tail) || len(r.Head) > 375 || len(r.Tail) > 375 || len(r.Head) < 371 {
		t.Fatalf("head %d bytes, tail %d bytes", len(r.Head), len(r.Tail))
	}
	if r.TotalLines != 1 || r.HeadLines != 1 || r.TailFirst != 1 || r.MidFirst != 1 || r.MidLast != 1 {
		t.Fatalf("lines: %+v", r)
	}
	if int64(len(r.Head))+r.MidBytes+int64(len(r.Tail)) != r.TotalBytes {
		t.Fatal("bytes do not add up")
	}
}

// reference computes what a Result must say for text, the slow and obvious way.
func reference(limit int, text []byte) (head, tail []byte, failures []Failure) {
	if len(text) <= limit {
		return text, nil, nil
	}
	half := (limit - Room(limit)) / 2
	h := bytes.LastIndexByte(text[:half], '\n') + 1
	if h == 0 {
		h = runeStart(text, half)
	}
	s := len(text) - half
	if text[s-1] != '\n' {
		if i := bytes.IndexByte(text[s:], '\n'); i >= 0 && s+i+1 < len(text) {
			s += i + 1
		} else {
			for k := 0; k < utf8.UTFMax && s < len(text) && !utf8.RuneStart(text[s]); k++ {
				s++
			}
		}
	}
	line := int64(bytes.Count(text[:h], []byte("\n"))) + 1
	for _, l := range bytes.SplitAfter(text[h:s], []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		body := bytes.TrimSuffix(l, []byte("\n"))
		lower := bytes.ToLower(asciiOnly(body))
		for _, w := range words {
			if bytes.Contains(lower, []byte(w)) {
				if len(failures) < MaxFailures {
					kept := body[:runeStart(body, min(len(body), MaxFailureLine))]
					failures = append(failures, Failure{Line: line, Text: string(bytes.ToValidUTF8(kept, []byte("\uFFFD"))), Cut: len(kept) < len(body)})
				}
				break
			}
		}
		if bytes.HasSuffix(l, []byte("\n")) {
			line++
		}
	}
	return text[:h], text[s:], failures
}

// asciiOnly hides non-ASCII bytes from ToLower, which would otherwise fold
// them as Unicode: the cutter folds ASCII letters only.
func asciiOnly(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 0x80 {
			c = 0
		}
		out[i] = c
	}
	return out
}

func check(t *testing.T, limit int, text []byte, chunks ...int) {
	t.Helper()
	r := cutAll(limit, text, chunks...)
	limit = max(limit, 16) // New's least limit
	head, tail, failures := reference(limit, text)
	if r.TotalBytes != int64(len(text)) {
		t.Fatalf("TotalBytes %d, want %d", r.TotalBytes, len(text))
	}
	lines := int64(bytes.Count(text, []byte("\n")))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		lines++
	}
	if r.TotalLines != lines {
		t.Fatalf("TotalLines %d, want %d", r.TotalLines, lines)
	}
	if !r.Cut {
		if len(text) > limit || string(r.Head) != string(text) {
			t.Fatalf("not cut: head %q for %q", r.Head, text)
		}
		return
	}
	if string(r.Head) != string(head) || string(r.Tail) != string(tail) {
		t.Fatalf("limit %d, %q:\nhead %q tail %q\nwant %q and %q", limit, text, r.Head, r.Tail, head, tail)
	}
	if len(r.Head)+len(r.Tail) > limit-Room(limit) {
		t.Fatalf("kept %d bytes, limit %d", len(r.Head)+len(r.Tail), limit)
	}
	if int64(len(r.Head))+r.MidBytes+int64(len(r.Tail)) != r.TotalBytes {
		t.Fatalf("head %d + middle %d + tail %d != %d", len(r.Head), r.MidBytes, len(r.Tail), r.TotalBytes)
	}
	if len(failures) == 0 {
		failures = nil
	}
	if !reflect.DeepEqual(r.Failures, failures) {
		t.Fatalf("limit %d, %q:\nfailures %+v\nwant     %+v", limit, text, r.Failures, failures)
	}
	if r.MidFirst < 1 || r.MidLast < r.MidFirst || r.MidLast > r.TotalLines || r.TailFirst > r.TotalLines || r.HeadLines > r.TailFirst {
		t.Fatalf("line ranges out of order: %+v", r)
	}
}

func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "bb", "\n", "error", "ERR", "or", "Fail", "é", "😀", "\xff", "traceback", "x y z ", "\n\n"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		limit := 8 + rng.IntN(120)
		check(t, limit, []byte(b.String()), rng.IntN(40), rng.IntN(40), 1, rng.IntN(40))
	}
}

// FuzzCut checks, for any text, limit and chunking: no panic; head, middle and
// tail add up to the text; they are what the reference says; the failure lines
// are the reference's; the kept part fits the limit.
func FuzzCut(f *testing.F) {
	f.Add([]byte("line 1\nline 2\nerror: x\nline 4\nline 5\n"), uint16(16), uint16(3), uint16(5))
	f.Add(bytes.Repeat([]byte("é"), 100), uint16(10), uint16(1), uint16(7))
	f.Add([]byte("a\nFAIL\nb\npanic: x\nc\nTraceback\nd\n"), uint16(9), uint16(2), uint16(0))
	f.Fuzz(func(t *testing.T, text []byte, limit, a, b uint16) {
		check(t, 8+int(limit%512), text, int(a), int(b))
	})
}

func BenchmarkCut(b *testing.B) {
	chunk := bytes.Repeat([]byte("2026-12-02T10:00:00Z INFO request handled path=/api/v1/items status=200 dur=3ms\n"), 800)
	b.SetBytes(int64(len(chunk)))
	c := New(1 << 20)
	for b.Loop() {
		c.Write(chunk)
	}
}

func BenchmarkHasFailure(b *testing.B) {
	for name, chunk := range map[string][]byte{
		"log":    bytes.Repeat([]byte("2026-12-02T10:00:00Z INFO request handled path=/api/v1/items status=200 dur=3ms\n"), 800),
		"digits": bytes.Repeat([]byte("1234567890 42.5 0x1f\n"), 3000),
		"zeros":  make([]byte, 64<<10),
		"cjk":    bytes.Repeat([]byte("エラーは起きていません。処理は正常に終了しました。ex\xe3\x81\x82\n"), 800),
		"yes":    bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz0123456789\n"), 2000),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				if hasFailure(chunk) {
					b.Fatal("found a failure")
				}
			}
		})
	}
}

// refHasFailure is the obvious way: ASCII lower case, then a search.
func refHasFailure(b []byte) bool {
	lower := bytes.ToLower(asciiOnly(b))
	for _, w := range words {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

func TestHasFailure(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	parts := []string{"x", "y ", "\n", "ERR", "err", "or", "Fa", "il", "tal", "PAN", "ic", "exc", "eption", "TRA", "ceback", "é", "\x00", "\xff", "あ", "\xe9\x9b\xbb", "\xf2", "\xe3", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "12345678"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(80) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		in := []byte(b.String())
		if got, want := hasFailure(in), refHasFailure(in); got != want {
			t.Fatalf("hasFailure(%q) = %v, want %v", in, got, want)
		}
	}
	// A word at every offset of a run with no letters, across the eight-byte
	// steps, in each case; and the word less its last letter is no word.
	for _, w := range []string{"error", "FAIL", "Fatal", "pAnIc", "Exception", "TRACEBACK", "é-error", "\xffFAIL"} {
		for off := 0; off < 40; off++ {
			in := append(bytes.Repeat([]byte("-"), off), w...)
			in = append(in, bytes.Repeat([]byte("-"), 40-off)...)
			near := append(bytes.Repeat([]byte("-"), off), w[:len(w)-1]...)
			near = append(near, bytes.Repeat([]byte("-"), 40-off)...)
			if !hasFailure(in) {
				t.Fatalf("%q at offset %d not found", w, off)
			}
			if hasFailure(near) != refHasFailure(near) {
				t.Fatalf("%q at offset %d: hasFailure and the reference disagree", near, off)
			}
		}
	}
}

// TestWordAtEveryPlace: each word, in lower, upper and mixed case, is
// found at every place from the start of a text, whatever its place among
// those hasFailure looks at first, and at its end; a word with one letter
// changed is not.
func TestWordAtEveryPlace(t *testing.T) {
	for _, w := range words {
		mixed := []byte(w)
		for i := 0; i < len(mixed); i += 2 {
			mixed[i] -= 'a' - 'A'
		}
		for _, form := range []string{w, strings.ToUpper(w), string(mixed)} {
			for at := range 12 {
				text := strings.Repeat("0", at) + form
				if !hasFailure([]byte(text)) || !hasFailure([]byte(text+" 12345 abc")) {
					t.Errorf("%q not found", text)
				}
				wrong := []byte(text)
				wrong[at+len(form)/2] = 'q'
				if hasFailure(wrong) {
					t.Errorf("%q found", wrong)
				}
			}
		}
	}
}

// FuzzHasFailure: hasFailure and the reference agree.
func FuzzHasFailure(f *testing.F) {
	f.Add([]byte(strings.Repeat("x", 40) + "ERROR" + strings.Repeat("y", 40)))
	f.Add([]byte("traceback"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := hasFailure(in), refHasFailure(in); got != want {
			t.Fatalf("%q: %v, want %v", in, got, want)
		}
	})
}

// TestFailurePicker: a test runner's lines that say a test starts or passes
// ("=== RUN   TestFailover", "--- PASS: TestFailover") are not failures, whatever
// the test's name; and once the slots are full the cut line does not give
// their number as the number of failures in the middle.
func TestFailurePicker(t *testing.T) {
	c := New(4000)
	c.Write([]byte(strings.Repeat("head line\n", 30)))
	for i := range 50 {
		fmt.Fprintf(c, "=== RUN   TestFailover%d\n--- PASS: TestFailover%d (0.00s)\n    --- PASS: TestFailover%d/sub (0.00s)\n", i, i, i)
		fmt.Fprintf(c, "error: case %d\n", i)
	}
	c.Write([]byte(strings.Repeat("tail line\n", 30)))
	r := c.Result()
	if len(r.Failures) != MaxFailures {
		t.Fatalf("%d failures kept, want %d", len(r.Failures), MaxFailures)
	}
	for _, f := range r.Failures {
		if !strings.HasPrefix(f.Text, "error: case ") {
			t.Fatalf("kept %q as a failure", f.Text)
		}
	}
	var b strings.Builder
	r.Layout(&b, "here")
	if !strings.Contains(b.String(), "; the first 20 of them that look like failures:]") || strings.Contains(b.String(), "20 of them look like failures") {
		t.Fatalf("the cut line: %s", b.String())
	}
}

// TestLayoutWithinLimit: a cut text, laid out with its cut line, failure
// lines and summary, is at most the limit (here 2,980 failure lines, some
// of them long, and a long where), and says how many failure lines it shows.
func TestLayoutWithinLimit(t *testing.T) {
	where := "the whole output is in /tmp/" + strings.Repeat("d", 80) + "/toolkit-shell-0123456789abcdef0123456789abcdef.log"
	for _, limit := range []int{1024, 2000, 4096, 32 << 10, 100 << 10, 1 << 20} {
		c := New(limit)
		for i := range 2980 {
			fmt.Fprintf(c, "=== RUN   TestX%d\n", i)
			if i%7 == 0 {
				fmt.Fprintf(c, "FAIL: TestX%d %s\n", i, strings.Repeat("why ", 200))
			} else {
				fmt.Fprintf(c, "error: TestX%d failed\n", i)
			}
		}
		r := c.Result()
		var b strings.Builder
		r.Layout(&b, where)
		if b.Len() > limit {
			t.Errorf("limit %d: laid out %d bytes", limit, b.Len())
		}
		shown := strings.Count(b.String(), "\n[line ")
		if shown > 0 && !strings.Contains(b.String(), fmt.Sprintf("; the first %d of them that look like failures:]", shown)) {
			t.Errorf("limit %d: %d failure lines shown, cut line %q", limit, shown, b.String())
		}
		if r.Cut && limit >= 4096 && shown == 0 {
			t.Errorf("limit %d: no failure line shown", limit)
		}
	}
}
