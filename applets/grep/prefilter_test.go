package grep

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference is the regular expression newFinder runs on a line, made
// without the prefilter.
func reference(t testing.TB, pattern string, fixed, ignoreCase bool) *regexp.Regexp {
	if fixed {
		pattern = regexp.QuoteMeta(pattern)
	}
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		t.Fatal(err)
	}
	if tree, err = withinLines(tree); err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(tree.String())
}

// everyLine is what a search without the prefilter finds: re run on each
// line on its own. A line is written as where it starts and ends and, when
// it is longer than MaxLine, where its first match starts and ends, as
// finder.each says it.
func everyLine(re *regexp.Regexp, buf []byte) []string {
	return eachLine(buf, func(line []byte) []int { return re.FindIndex(line) })
}

// everyLineHolding is everyLine for a literal of bytes: each line that
// holds it, at its first place there.
func everyLineHolding(lit string, buf []byte) []string {
	return eachLine(buf, func(line []byte) []int {
		if i := bytes.Index(line, []byte(lit)); i >= 0 {
			return []int{i, i + len(lit)}
		}
		return nil
	})
}

func eachLine(buf []byte, match func(line []byte) []int) []string {
	var out []string
	for ls := 0; ls < len(buf); {
		le := len(buf)
		if i := bytes.IndexByte(buf[ls:], '\n'); i >= 0 {
			le = ls + i
		}
		if loc := match(buf[ls:le]); loc != nil {
			if le-ls > MaxLine {
				out = append(out, fmt.Sprintf("%d-%d:%d-%d", ls, le, ls+loc[0], ls+loc[1]))
			} else {
				out = append(out, fmt.Sprintf("%d-%d", ls, le))
			}
		}
		ls = le + 1
	}
	return out
}

// found is what the finder finds, as everyLine says it.
func found(f *finder, buf []byte) []string {
	var out []string
	f.each(buf, 0, func(ls, le, ms, me int) bool {
		if ms < 0 && me < 0 {
			out = append(out, fmt.Sprintf("%d-%d", ls, le))
		} else {
			out = append(out, fmt.Sprintf("%d-%d:%d-%d", ls, le, ms, me))
		}
		return true
	})
	return out
}

// show writes a class string as a pattern: a byte alone as itself, a set
// as [..] of its bytes.
func show(cs classString) string {
	var b strings.Builder
	for i := range cs {
		m := cs[i].members(256)
		if len(m) == 1 {
			b.WriteByte(m[0])
			continue
		}
		b.WriteByte('[')
		for j := 0; j < len(m); {
			k := j
			for k+1 < len(m) && m[k+1] == m[k]+1 {
				k++
			}
			if k-j >= 2 {
				fmt.Fprintf(&b, "%c-%c", m[j], m[k])
			} else {
				b.Write(m[j : k+1])
			}
			j = k + 1
		}
		b.WriteByte(']')
	}
	return b.String()
}

func shown(ss []scanner) []string {
	var out []string
	for _, s := range ss {
		out = append(out, show(s.cs))
	}
	return out
}

// TestPrefilter: the class strings a pattern's matches must hold, whether
// they are the whole pattern, and the same lines and matches with the
// prefilter as without, for the patterns models type.
func TestPrefilter(t *testing.T) {
	for _, tc := range []struct {
		pattern   string
		ic, plain bool
		need      []string
		also      [][]string
	}{
		{`TODO|FIXME`, false, true, []string{"TODO", "FIXME"}, nil},
		{`fatal.error`, true, false, []string{"[Ff][Aa][Tt][Aa][Ll]"}, [][]string{{"[Ee][Rr][Rr][Oo][Rr]"}}},
		{`errors\.New\("[a-z]`, false, true, []string{`errors.New("[a-z]`}, nil},
		{`func \w+Handler`, false, false, []string{"[0-9A-Z_a-z]Handler"}, [][]string{{"func [0-9A-Z_a-z]"}}},
		{`func.main`, false, false, []string{"func"}, [][]string{{"main"}}},
		{`[a-z]+_[0-9]{3}`, false, false, []string{"[a-z]_[0-9][0-9][0-9]"}, nil},
		{`(?i)task`, false, false, []string{"[Tt][Aa]"}, nil}, // s and k fold outside ASCII
		{`(?i)Mask|kit`, false, false, []string{"[Mm][Aa]", "[Ii][Tt]"}, nil},
		{`foo(bar|baz)+`, false, false, []string{"fooba[rz]"}, nil},
		{`\bword\b`, false, false, []string{"word"}, nil},
		{`a|b*`, false, false, nil, nil},
		{`x.y`, false, false, []string{"y"}, [][]string{{"x"}}}, // y is the rarer
		{`ça`, false, true, []string{"\xc3\xa7a"}, nil},
		{`(?i)é`, false, false, []string{"\xc3[\x89\xa9]"}, nil},
		{`[A-Z][a-z]+[0-9]{2,}`, false, false, []string{"[a-z][0-9][0-9]"}, [][]string{{"[A-Z][a-z]"}}},
	} {
		f, err := newFinder(tc.pattern, false, tc.ic, false)
		if err != nil {
			t.Fatal(err)
		}
		var also [][]string // the sets after need
		for i, ss := range f.sets {
			if i > 0 {
				also = append(also, shown(ss))
			}
		}
		if got := shown(f.need); !slices.Equal(got, tc.need) || f.plain != tc.plain || fmt.Sprint(also) != fmt.Sprint(tc.also) {
			t.Errorf("%q: need %q also %q (plain %v), want %q also %q (plain %v)", tc.pattern, got, also, f.plain, tc.need, tc.also, tc.plain)
		}
		text := []byte("TODO: x\nfixme FIXME\nFATAL ERROR here\nerrors.New(\"bad\")\nfunc fooHandler() {\nfunc main() {}\nta\u212Ak\nabc_123\nfoobarbaz\nça É é\nVersion 2 of Errno42, a3 é9 Ab1\n")
		// A line longer than MaxLine, where a match's place is given.
		text = append(text, strings.Repeat("- ", MaxLine/2)+string(bytes.ReplaceAll(text, []byte("\n"), []byte(" ; ")))+"\n"...)
		if a, b := found(f, text), everyLine(reference(t, tc.pattern, false, tc.ic), text); !slices.Equal(a, b) {
			t.Errorf("%q: with the prefilter %q, without %q", tc.pattern, a, b)
		}
	}
}

// TestInRun: a run of ASCII bytes is found eight bytes at a time, each
// byte of a word marked exactly (a byte of 0x80 or more never), at every
// place in a text, as the byte table finds it.
func TestInRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range [][2]byte{{'0', '9'}, {'a', 'z'}, {'A', 'Z'}, {1, 0x7f}, {'_', '_'}} {
		for range 10000 {
			var w [8]byte
			for i := range w {
				w[i] = byte(rng.IntN(256))
				if rng.IntN(2) == 0 {
					w[i] = r[0] + byte(rng.IntN(int(r[1]-r[0])+1)) + byte(rng.IntN(3)) - 1
				}
			}
			m := inRun(binary.LittleEndian.Uint64(w[:]), r[0], r[1])
			for i, c := range w {
				if got, want := m>>(8*i+7)&1 == 1, c >= r[0] && c <= r[1]; got != want || m>>(8*i)&0x7f != 0 {
					t.Fatalf("run %q-%q, byte %#x: marked %v", r[0], r[1], c, got)
				}
			}
		}
	}
	var digits byteSet
	for c := byte('0'); c <= '9'; c++ {
		digits.add(c)
	}
	s := scanner{cs: classString{digits}, table: digits}
	s.lo, s.hi, s.run = digits.asciiRun()
	if !s.run {
		t.Fatal("the digits are not a run")
	}
	text := []byte("abcdefghijklmnopqrstuvwxyz é ü 7 more words 42\n9")
	for p := range text {
		c := newCache()
		want := -1
		for i := p; i < len(text); i++ {
			if digits.has(text[i]) {
				want = i
				break
			}
		}
		if got := s.anchor(text, p, &c); got != want {
			t.Fatalf("from %d: found at %d, the table at %d", p, got, want)
		}
	}
	var notRun byteSet
	notRun.add('a')
	notRun.add('c')
	if _, _, ok := notRun.asciiRun(); ok {
		t.Error("a and c are a run")
	}
}

// TestNotUTF8: a literal that is not UTF-8 (Latin-1 from the command
// line) is found as its bytes, as before the class strings; a longer one
// than they check is refused, saying why.
func TestNotUTF8(t *testing.T) {
	f, err := newFinder("caf\xe9", false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat(" ", MaxLine) // a long line: where its match is is given
	text := []byte("cafe\nun caf\xe9 cr\xe8me" + pad + "\n")
	if got, want := found(f, text), fmt.Sprintf("5-%d:8-12", 18+MaxLine); !slices.Equal(got, []string{want}) {
		t.Errorf("found %q, want %q", got, want)
	}
	if _, err := newFinder(strings.Repeat("\xe9", maxClass+1), true, false, false); err == nil {
		t.Error("a literal of 33 bytes not UTF-8 was taken")
	}
}

// TestPrefilterBounded: a class string longer than maxClass is searched
// for by maxClass places of it, and a text of one byte repeated, every
// byte a hit of the anchor, costs no more than maxClass checks a byte; the
// literal itself is found in a line with bytes.Index, not the expression,
// which stepped each of its 1,001 places at each byte of the line (12 s
// here).
func TestPrefilterBounded(t *testing.T) {
	long := strings.Repeat("a", 1000) + "b"
	f, err := newFinder(long, true, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.plain || len(f.need) != 1 || len(f.need[0].cs) != maxClass || string(f.lit) != long {
		t.Fatalf("a literal of %d bytes: plain %v, a class string of %d places, literal %d bytes", len(long), f.plain, len(f.need[0].cs), len(f.lit))
	}
	text := []byte(strings.Repeat("a", 1<<20))
	if found(f, text) != nil {
		t.Fatal("found in a text without it")
	}
	text = append(text, 'b')
	if got := found(f, text); !slices.Equal(got, []string{fmt.Sprintf("0-%d:%d-%d", len(text), len(text)-len(long), len(text))}) {
		t.Fatalf("found %q", got)
	}
	// Only where the expression and the bytes agree: U+FFFD in a pattern
	// matches an invalid byte of a text too.
	for _, p := range []string{strings.Repeat("x", 40) + "\uFFFD", strings.Repeat("x", 40)} {
		f, err := newFinder(p, true, true, false)
		if err != nil {
			t.Fatal(err)
		}
		if f.lit != nil {
			t.Errorf("%q (ignore case %v): found as its bytes", p, true)
		}
	}
	f, err = newFinder(strings.Repeat("x", 40)+"\uFFFD", true, false, false)
	if err != nil || f.lit != nil {
		t.Errorf("a literal with U+FFFD found as its bytes (%v)", err)
	}
	text = []byte(strings.Repeat("x", 40) + "\xff\n")
	if a, b := found(f, text), everyLine(reference(t, regexp.QuoteMeta(strings.Repeat("x", 40)+"\uFFFD"), false, false), text); !slices.Equal(a, b) {
		t.Errorf("with U+FFFD: %q, the expression %q", a, b)
	}
}

// FuzzPrefilter: on any pattern and text, the prefiltered search finds the
// lines and matches the pattern run on each line finds, byte for byte.
func FuzzPrefilter(f *testing.F) {
	for _, p := range []string{`TODO|FIXME`, `(?i)fatal.error`, `errors\.New\("[a-z]`, `func \w+Handler`, `func.main`, `(?i)ta(s|k)`, `a+b|c`, `x{2,}y`, `[a-z]+_[0-9]{3}`, `ab|abc`, `\bis\b`, `(?i)ÉTÉ|été`, `"[^"]+"`, `x.+é`, `[A-Z][a-z]+[0-9]{2,}`, `\S+\(`, `(?i)ab+c`} {
		f.Add(p, []byte("TODO x\nFIXME\nfatal ERROR\nerrors.New(\"a\")\nfunc xHandler\nfunc main\ntaſk TAK\naab c\nxxy\nab_123 abc\nthis is\nÉté\n"))
	}
	f.Fuzz(func(t *testing.T, pattern string, text []byte) {
		if len(pattern) > 64 || len(text) > 4096 {
			return
		}
		for _, fixed := range []bool{false, true} {
			if _, err := regexp.Compile(pattern); err != nil && !fixed {
				continue
			}
			for _, ic := range []bool{false, true} {
				fd, err := newFinder(pattern, fixed, ic, false)
				if err != nil {
					continue
				}
				var want []string
				if utf8.ValidString(pattern) {
					want = everyLine(reference(t, pattern, fixed, ic), text)
				} else {
					want = everyLineHolding(pattern, text) // a literal of bytes: no expression says it
				}
				if a, b := found(fd, text), want; !slices.Equal(a, b) {
					t.Fatalf("%q (fixed %v, ignore case %v) in %q: with the prefilter %q, without %q", pattern, fixed, ic, text, a, b)
				}
			}
		}
	})
}

// BenchmarkLongLiteral: a literal of 100,000 bytes, case-insensitive, is
// compiled in time linear in its length: 0.2 s, most of it Go's regexp
// (1.1 s when each 32-place window's cost was worked out anew).
func BenchmarkLongLiteral(b *testing.B) {
	var lit strings.Builder
	for i := range 17000 {
		fmt.Fprintf(&lit, "w%04d ", i%9973)
	}
	p := lit.String()[:100000]
	for b.Loop() {
		if _, err := newFinder(p, true, true, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrefilter: the patterns models type, on a text of Go-like
// lines, with the prefilter and with the pattern run on every line.
func BenchmarkPrefilter(b *testing.B) {
	var text bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&text, "\tif err := doThing%d(ctx, x); err != nil { return fmt.Errorf(\"thing %d: %%w\", err) }\n", i, i)
		if i%500 == 0 {
			text.WriteString("// TODO: fatal error handling in func main\nfunc fooHandler() { errors.New(\"bad\") }\n")
		}
	}
	buf := text.Bytes()
	for _, tc := range []struct {
		pattern string
		fold    bool
	}{{`TODO|FIXME`, false}, {`fatal.error`, true}, {`errors\.New\("[a-z]`, false}, {`func \w+Handler`, false}, {`func.main`, false}, {`[a-z]+_[0-9]{3}`, false}} {
		f, err := newFinder(tc.pattern, false, tc.fold, false)
		if err != nil {
			b.Fatal(err)
		}
		re := reference(b, tc.pattern, false, tc.fold)
		if a, p := found(f, buf), everyLine(re, buf); !slices.Equal(a, p) {
			b.Fatalf("%s: %d found, %d by every line", tc.pattern, len(a), len(p))
		}
		b.Run(tc.pattern+"/prefilter", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				f.each(buf, 0, func(int, int, int, int) bool { return true })
			}
		})
		b.Run(tc.pattern+"/every-line", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				everyLine(re, buf)
			}
		})
	}
}

// TestDriverMoves: where the set the byte table picks ("func") is on most
// lines of a tree and the other ("main") on few, the search moves to the
// other; the lines found are those the expression finds, before and after
// the move, and a set found wanting is not gone back to.
func TestDriverMoves(t *testing.T) {
	f, err := newFinder("func.main", false, false, false)
	if err != nil || len(f.sets) != 2 {
		t.Fatalf("%v, %d sets", err, len(f.sets))
	}
	re := regexp.MustCompile("func.main")
	var text strings.Builder
	for i := range 5000 {
		switch {
		case i%97 == 0:
			text.WriteString("func main() {}\n")
		case i%89 == 0:
			text.WriteString("mainly no func here\n")
		default:
			fmt.Fprintf(&text, "func f%d() {}\n", i)
		}
	}
	piece := []byte(text.String())
	var want []string
	for line := range strings.SplitSeq(strings.TrimSuffix(text.String(), "\n"), "\n") {
		if re.MatchString(line) {
			want = append(want, line)
		}
	}
	for round := range 5 {
		var got []string
		f.each(piece, 0, func(ls, le, _, _ int) bool {
			got = append(got, string(piece[ls:le]))
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, driver %d: %d lines, want %d", round, f.driver.Load(), len(got), len(want))
		}
	}
	if d := f.driver.Load(); d != 1 {
		t.Fatalf("the driver is set %d, not main's", d)
	}
}
