package grep

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// chainFor is the chain of a pattern as newFinder makes it, or nil.
func chainFor(t testing.TB, pattern string) *chain {
	tree, err := syntax.Parse(pattern, syntax.Perl&^syntax.OneLine)
	if err != nil {
		t.Fatal(err)
	}
	if tree, err = withinLines(tree); err != nil {
		t.Fatal(err)
	}
	return chainOf(tree.Simplify())
}

// chainAgrees says where a chain and the expression disagree on a line
// of text, or "".
func chainAgrees(t testing.TB, pattern string, c *chain, text []byte) string {
	re := reference(t, pattern, false, false)
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		if c.match(line) != re.Match(line) {
			return string(line)
		}
	}
	return ""
}

// TestChainOf: which patterns a chain decides (a run of byte sets, each
// once, +, ? or *, exact against the regexp's runes), and that it decides
// them as the regexp does.
func TestChainOf(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		chain   bool
	}{
		{`[A-Z][a-z]+[0-9]{2,}`, true},
		{`func \w+Handler`, true},
		{`[a-z]+_[0-9]{3}`, true},
		{`"[^"]+"`, true},  // [^"] holds every rune from 0x80 on, and repeats
		{`x.+y`, true},     // so does .
		{`\S+\(`, true},    // and \S
		{`(?i)ab+c`, true}, // a, b and c fold within ASCII
		{`(foo)\d+`, true},
		{`x.y`, false},        // one . is one rune: one to four bytes
		{`x[^"]y`, false},     // so is a class past ASCII, once
		{`.+.+`, false},       // two such places could share one rune's bytes
		{`[^a]+[^b]+`, false}, // as could these
		{`(?i)s+k`, false},    // s folds to ſ, k to the Kelvin sign
		{`é+x`, false},
		{`[a-zé]+x`, false}, // a class of some runes past ASCII
		{`a*b`, true},
		{`ab?c`, true},
		{`func.*Handler`, true},
		{`.*x\s*=.*`, true},
		{`a*`, false}, // it matches an empty line
		{`a?b*`, false},
		{`.*.*x`, false},
		{`[^a]+x?[^b]+`, false}, // x may be left out
		{`[^a]+x[^b]+`, true},
		{`x.?y`, false},
		{`x{2,4}`, false},
		{`^ab+`, false},
		{`ab+$`, false},
		{`\bab+`, true},
		{`\berr\b`, true},
		{`\b\w+Error\b`, true},
		{`x\b`, true},
		{`a?\bb`, false}, // a \b beside a place that may be left out
		{`a\bb*`, false},
		{`ab*\b`, false},
		{`\Bab`, false},
		{`\b`, false},
		{`ab|cd+`, false},
		{`(ab)+`, false},
		{strings.Repeat("a", 65) + "+", false}, // 65 places
		{strings.Repeat("a", 64) + "+", true},  // 65 a, 64 places
	} {
		c := chainFor(t, tc.pattern)
		if (c != nil) != tc.chain {
			t.Errorf("%q: a chain %v, want %v", tc.pattern, c != nil, tc.chain)
			continue
		}
		text := []byte("Version 2 of Errno42, a3 é9 Ab1\nfunc fooHandler() {\nabc_123\n\"\" \"x\" \"é\"\nxéy x\xffy xy x\ny\nfoo(bar) foo12\nABBC abbbc ac\n" + strings.Repeat("a", 70) + "\nerr errs xerr err_ (err) éerr\nab ab_ abb\n")
		if c != nil {
			if line := chainAgrees(t, tc.pattern, c, text); line != "" {
				t.Errorf("%q: the chain and the expression disagree on %q", tc.pattern, line)
			}
		}
	}
}

// TestChainRandom: on random chains of the sets, repeats and \b models type
// and random lines of ASCII, runes of two and three bytes and invalid
// bytes, the chain and the expression agree on every line.
func TestChainRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	parts := []string{`a`, `b`, `_`, `"`, `\w`, `\d`, `\s`, `[a-c]`, `[^"]`, `\S`, `.`, `[^a]`, `(?i:b)`, `é`, `\b`}
	bytesOf := []string{"a", "b", "c", "_", "\"", "1", " ", "B", "\t", "é", "€", "\xff", "\xe2\x82", "\xc3"}
	chains := 0
	for range 4000 {
		var p strings.Builder
		for range 1 + rng.IntN(5) {
			p.WriteString(parts[rng.IntN(len(parts))])
			switch rng.IntN(6) {
			case 0:
				p.WriteString("+")
			case 1:
				p.WriteString("{2,}")
			case 2:
				p.WriteString("*")
			case 3:
				p.WriteString("?")
			}
		}
		pattern := p.String()
		c := chainFor(t, pattern)
		if c == nil {
			continue
		}
		chains++
		var text strings.Builder
		for range 20 {
			for range rng.IntN(12) {
				text.WriteString(bytesOf[rng.IntN(len(bytesOf))])
			}
			text.WriteByte('\n')
		}
		if line := chainAgrees(t, pattern, c, []byte(text.String())); line != "" {
			t.Fatalf("%q: the chain and the expression disagree on %q", pattern, line)
		}
	}
	if chains < 1000 {
		t.Fatalf("only %d of the patterns were chains", chains)
	}
}

// TestChainDecides: a line of at most MaxLine bytes is decided by the
// chain, not the expression; on a longer one the expression finds where
// the match is.
func TestChainDecides(t *testing.T) {
	f, err := newFinder(`[A-Z][a-z]+[0-9]{2,}`, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.chain == nil {
		t.Fatal("no chain")
	}
	f.re = regexp.MustCompile(`Errno42`) // what the chain is not
	short := []byte("a Version 2 of Errno42 Ab12")
	if _, _, ok := f.inLine(short); !ok {
		t.Error("a short line not found by the chain")
	}
	long := append(bytes.Repeat([]byte{' '}, MaxLine), short...)
	if ms, me, ok := f.inLine(long); !ok || string(long[ms:me]) != "Errno42" {
		t.Errorf("a long line: %v at %d-%d, want the expression's match", ok, ms, me)
	}
}

// BenchmarkChain: a chain against the expression on lines of Go, for
// chains models type (the chain 3-15× faster on this machine).
func BenchmarkChain(b *testing.B) {
	lines := [][]byte{
		[]byte("\tif err := doThing42(ctx, x); err != nil { return fmt.Errorf(\"thing: %w\", err) }"),
		[]byte("func (s *Server) ServeHTTP(w ResponseWriter, r *Request) { h := s.mux.Handler(r) }"),
		[]byte("\t// Version 2 of Errno42 is a3 and Ab1"),
	}
	for _, p := range []string{`if err.*nil`, `func.*Handler`, `[A-Z][a-z]+[0-9]{2,}`, `func \w+Handler`, `"[^"]*"`} {
		c, re := chainFor(b, p), reference(b, p, false, false)
		b.Run(p+"/chain", func(b *testing.B) {
			for b.Loop() {
				for _, l := range lines {
					c.match(l)
				}
			}
		})
		b.Run(p+"/regexp", func(b *testing.B) {
			for b.Loop() {
				for _, l := range lines {
					re.Match(l)
				}
			}
		})
	}
}
