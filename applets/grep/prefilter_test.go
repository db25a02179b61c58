package grep

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// plain is what a search without the prefilter finds: the pattern, made
// to match within a line, run on each line on its own.
func plain(f *finder, buf []byte) []string {
	var out []string
	for ls := 0; ls < len(buf); {
		le := len(buf)
		if i := bytes.IndexByte(buf[ls:], '\n'); i >= 0 {
			le = ls + i
		}
		if loc := f.re.FindIndex(buf[ls:le]); loc != nil {
			out = append(out, fmt.Sprintf("%d-%d:%d-%d", ls, le, ls+loc[0], ls+loc[1]))
		}
		ls = le + 1
	}
	return out
}

// found is what the finder finds, as plain says it.
func found(f *finder, buf []byte) []string {
	var out []string
	f.each(buf, lowerASCII(nil, buf), func(ls, le, ms, me int) bool {
		out = append(out, fmt.Sprintf("%d-%d:%d-%d", ls, le, ms, me))
		return true
	})
	return out
}

// TestPrefilter: the literals a pattern's matches must hold, and the same
// lines and matches with the prefilter as without, for the patterns models
// type.
func TestPrefilter(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		fold    bool
		lits    []string
	}{
		{`TODO|FIXME`, false, []string{"FIXME", "TODO"}},
		{`fatal.error`, true, []string{"fatal"}},
		{`errors\.New\("[a-z]`, false, []string{`errors.New("`}},
		{`func \w+Handler`, false, []string{"Handler"}},
		{`func.main`, false, []string{"func"}},
		{`[a-z]+_[0-9]{3}`, false, nil},
		{`(?i)task`, true, []string{"ta"}}, // k folds to the Kelvin sign
		{`(?i)Mask|kit`, false, nil},
		{`foo(bar|baz)+`, false, []string{"foo"}},
		{`a|b*`, false, nil},
	} {
		ic := tc.fold && !strings.HasPrefix(tc.pattern, "(?i)")
		f, err := newFinder(tc.pattern, false, ic, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range f.lits {
			got = append(got, string(l))
		}
		if tc.lits != nil && (!slices.Equal(got, tc.lits) || f.fold != tc.fold) {
			t.Errorf("%q: literals %q (fold %v), want %q (fold %v)", tc.pattern, got, f.fold, tc.lits, tc.fold)
		}
		text := []byte("TODO: x\nfixme FIXME\nFATAL ERROR here\nerrors.New(\"bad\")\nfunc fooHandler() {\nfunc main() {}\nta\u212Ak\nabc_123\nfoobarbaz\n")
		if a, b := found(f, text), plain(f, text); !slices.Equal(a, b) {
			t.Errorf("%q: with the prefilter %q, without %q", tc.pattern, a, b)
		}
	}
}

// FuzzPrefilter: on any pattern and text, the prefiltered search finds the
// lines and matches the pattern run on each line finds, byte for byte.
func FuzzPrefilter(f *testing.F) {
	for _, p := range []string{`TODO|FIXME`, `(?i)fatal.error`, `errors\.New\("[a-z]`, `func \w+Handler`, `func.main`, `(?i)ta(s|k)`, `a+b|c`, `x{2,}y`} {
		f.Add(p, []byte("TODO x\nFIXME\nfatal ERROR\nerrors.New(\"a\")\nfunc xHandler\nfunc main\ntaſk TAK\naab c\nxxy\n"))
	}
	f.Fuzz(func(t *testing.T, pattern string, text []byte) {
		if len(pattern) > 64 || len(text) > 4096 {
			return
		}
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		for _, ic := range []bool{false, true} {
			fd, err := newFinder(pattern, false, ic, false)
			if err != nil || fd.re == nil {
				continue
			}
			if a, b := found(fd, text), plain(fd, text); !slices.Equal(a, b) {
				t.Fatalf("%q (ignore case %v) in %q: with the prefilter %q, without %q", pattern, ic, text, a, b)
			}
		}
	})
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
	lower := lowerASCII(nil, buf)
	for _, tc := range []struct {
		pattern string
		fold    bool
	}{{`TODO|FIXME`, false}, {`fatal.error`, true}, {`errors\.New\("[a-z]`, false}, {`func \w+Handler`, false}, {`func.main`, false}, {`[a-z]+_[0-9]{3}`, false}} {
		f, err := newFinder(tc.pattern, false, tc.fold, false)
		if err != nil {
			b.Fatal(err)
		}
		if a, p := found(f, buf), plain(f, buf); !slices.Equal(a, p) {
			b.Fatalf("%s: %d found, %d by every line", tc.pattern, len(a), len(p))
		}
		b.Run(tc.pattern+"/prefilter", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				f.each(buf, lower, func(int, int, int, int) bool { return true })
			}
		})
		b.Run(tc.pattern+"/every-line", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				plain(f, buf)
			}
		})
	}
}
