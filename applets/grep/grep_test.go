package grep

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"toolkit/internal/outcome"
	"toolkit/internal/walk"
	"toolkit/testsupport/gittest"
)

var words = []string{"alpha", "beta", "Gamma", "delta", "x1", "foo_bar", "a.b", "(paren)", "tab\there", "ÜBER", "über"}

// randomRepo makes a repository of random text files, some hidden, some
// ignored, some binary, all of it added.
func randomRepo(t *testing.T, rng *rand.Rand) string {
	dir := t.TempDir()
	var write func(d string, depth int)
	write = func(d string, depth int) {
		for _, name := range []string{"a.go", "b.txt", ".h", "c.log", "sub", "dir2"} {
			p := filepath.Join(d, name)
			if strings.HasPrefix(name, "sub") || strings.HasPrefix(name, "dir") {
				if depth < 2 && rng.IntN(2) == 0 {
					if err := os.Mkdir(p, 0o755); err != nil {
						t.Fatal(err)
					}
					write(p, depth+1)
				}
				continue
			}
			if rng.IntN(3) == 0 {
				continue
			}
			var b strings.Builder
			for range rng.IntN(30) {
				for range 1 + rng.IntN(5) {
					b.WriteString(words[rng.IntN(len(words))])
					b.WriteByte(" \t"[rng.IntN(2)])
				}
				b.WriteString(map[bool]string{true: "\r\n", false: "\n"}[rng.IntN(8) == 0])
			}
			if rng.IntN(10) == 0 {
				b.WriteString("\x00binary alpha\n")
			}
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(dir, 0)
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n!sub/c.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, dir, "init", "-q", ".")
	gittest.Run(t, dir, "add", "-A")
	return dir
}

// TestAgainstGitGrep: on random repositories, grep finds exactly the lines
// git grep -n finds (the same files: git's ignore rules, binary files left
// out), for literals, regular expressions and either case.
func TestAgainstGitGrep(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	patterns := []struct {
		pattern    string
		ignoreCase bool
		fixed      bool
	}{
		{"alpha", false, false}, {"Gamma", true, false}, {"a.b", false, true}, {"(paren)", false, true},
		{"^beta", false, false}, {"x[0-9]", false, false}, {"foo_bar$", false, false}, {`\bdelta\b`, false, false},
		{"über", true, false}, {"a.b", false, false}, {"l(ph|t)a", false, false}, {"tab\there", false, false},
	}
	repos := 20
	if testing.Short() {
		repos = 6
	}
	lines := 0
	for seed := range repos {
		dir := randomRepo(t, rand.New(rand.NewPCG(uint64(seed), 3)))
		for _, p := range patterns {
			args := []string{"grep", "-n", "-I", "--no-color", "-E"}
			if p.fixed {
				args[4] = "-F"
			}
			if p.ignoreCase {
				args = append(args, "-i")
			}
			// git grep exits 1 when nothing matches.
			b, err := gittest.Output(dir, nil, append(args, "-e", p.pattern)...)
			out := string(b)
			if err != nil && out != "" {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSuffix(strings.ReplaceAll(out, "\r\n", "\n"), "\n"), "\n")
			if out == "" {
				want = nil
			}
			o := run(t, dir, Args{Pattern: p.pattern, IgnoreCase: p.ignoreCase, Fixed: p.fixed, Hidden: true, Limit: ptr(100000)})
			got := strings.Split(o.Text, "\n")
			got = got[:len(got)-1]
			for len(got) > 0 && strings.HasPrefix(got[len(got)-1], "[") {
				got = got[:len(got)-1]
			}
			for i := range want {
				want[i] = strings.TrimSuffix(want[i], "\r")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %+v:\ngrep: %q\ngit:  %q", seed, p, got, want)
			}
			lines += len(want)
		}
	}
	t.Logf("%d repositories, %d patterns: %d lines, all as git grep found them", repos, len(patterns), lines)
}

func run(t *testing.T, dir string, a Args) outcome.Outcome {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	o := Run(context.Background(), a)
	if o.Kind != outcome.Done {
		t.Fatalf("%+v: %s", a, o.Message)
	}
	return o
}

// TestLongLineCut: a long line is shown around its match, and says how
// much was left out.
func TestLongLineCut(t *testing.T) {
	line := strings.Repeat("x", 5000) + "NEEDLE" + strings.Repeat("é", 3000)
	got := showLine([]byte(line), 5000, 5006)
	if !strings.Contains(got, "NEEDLE") || !strings.HasPrefix(got, "… ") || len(got) > MaxLine+100 {
		t.Fatalf("%q", got)
	}
	var left int
	if _, err := fmt.Sscanf(got[strings.LastIndex(got, "[line cut: "):], "[line cut: %d characters]", &left); err != nil {
		t.Fatal(err)
	}
	shown := strings.TrimSuffix(strings.TrimPrefix(got[:strings.LastIndex(got, " … [line cut")], "… "), "")
	if n := len([]rune(shown)) + left; n != len([]rune(line)) {
		t.Fatalf("shown %d + cut %d characters = %d, not %d", len([]rune(shown)), left, n, len([]rune(line)))
	}
}

// TestFinderLines: the finder reports each matching line once, never a
// match across two lines (whatever class or . the pattern has), never a
// line after the last line end; $ matches before \r\n too.
func TestFinderLines(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		text    string
		want    []string
	}{
		{"^", "a\nb\n", []string{"a", "b"}},
		{"x*", "a\n\nb", []string{"a", "", "b"}},
		{`a\sb`, "a\nb\na b\n", []string{"a b"}},
		{"b$", "ab\r\nab\n", []string{"ab\r", "ab"}},
		{"^$", "\n\ntest\n", []string{"", ""}},
		{"^$", "", nil},
		{`\z`, "a\n\nb\n", []string{"a", "", "b"}}, // each line a text of its own, as ripgrep's
		{`\Ab|c\z`, "ab\nb\nc\r\ncd\n", []string{"b", "c\r"}},
		{`[xw][^y]*[zq]`, "x\nz\nxz\n", []string{"xz"}},
		{`(?s)a.b`, "a\nb\naxb\n", []string{"axb"}},
		{`\D+`, "1\n2\n", nil},
		{"o", "foo\nbar\nboo", []string{"foo", "boo"}},
	} {
		f, err := newFinder(tc.pattern, false, false, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		buf := []byte(tc.text)
		f.each(buf, 0, func(ls, le, ms, me int) bool {
			got = append(got, string(buf[ls:le]))
			return true
		})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q in %q: %q, want %q", tc.pattern, tc.text, got, tc.want)
		}
	}
}

// TestLineEndInPattern: a pattern that can only match a line end is
// refused, saying why.
func TestLineEndInPattern(t *testing.T) {
	for _, p := range []string{`a\nb`, `[\n]`} {
		if _, err := newFinder(p, false, false, false); err != errLineEnd {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestLinearPatterns: a pattern whose match attempts could run across
// lines takes linear time over a file of 100,001 short lines (it ran past
// 20 s when each attempt restarted at every line); the call is given a
// short limit, and must not be stopped by it.
func TestLinearPatterns(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100001 {
		b.WriteString(string("abcdxw"[rng.IntN(6)]) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := Run(ctx, Args{Pattern: `[xw][^y]*[zq]`, Path: &dir})
	if o.Kind != outcome.Done || !strings.Contains(o.Text, "[no matches in 1 file]") {
		t.Fatalf("%+v", o)
	}
}

// TestTypesDeclared: the type field's allowed values are the type table's
// names, so that the schema lists every type and only those.
func TestTypesDeclared(t *testing.T) {
	f, _ := reflect.TypeFor[Args]().FieldByName("Type")
	declared := strings.Fields(strings.TrimPrefix(f.Tag.Get("check"), "oneof="))
	names := slices.Sorted(maps.Keys(walk.Types()))
	if !slices.Equal(declared, names) {
		t.Fatalf("declared %q, the table has %q", declared, names)
	}
}

// TestMultiline: with multiline a match spans lines (. takes the line end,
// \n may be in the pattern); each match is reported once with its first
// and last line, and the next is looked for after its last line.
func TestMultiline(t *testing.T) {
	for _, tc := range []struct {
		pattern, text string
		want          [][2]string // each match's first and last line
	}{
		{`a\nb`, "a\nb\na\nc\na\nb", [][2]string{{"a", "b"}, {"a", "b"}}},
		{`\{.*?\}`, "f() {\n x\n}\ng() {}\n", [][2]string{{"f() {", "}"}, {"g() {}", "g() {}"}}},
		{`^$`, "\n\nx\n", [][2]string{{"", ""}, {"", ""}}},
		{`x\n`, "x\ny\n", [][2]string{{"x", "x"}}},
		{`nothing`, "a\nb\n", nil},
	} {
		f, err := newFinder(tc.pattern, false, false, true)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]string
		buf := []byte(tc.text)
		f.each(buf, 0, func(ls, le, ms, me int) bool {
			lines := strings.Split(string(buf[ls:le]), "\n")
			got = append(got, [2]string{lines[0], lines[len(lines)-1]})
			return true
		})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q in %q: %q, want %q", tc.pattern, tc.text, got, tc.want)
		}
	}
}

// TestMultilineAgainstGrep: with multiline, the files a pattern that spans
// lines matches are those GNU grep -lzP finds (the whole file one record),
// over random files of a few letters.
func TestMultilineAgainstGrep(t *testing.T) {
	if err := exec.Command("sh", "-c", "printf 'a\\nb' | grep -qzP 'a\\nb'").Run(); err != nil {
		t.Skip("no grep with -P")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	for i := range 60 {
		var b strings.Builder
		for range rng.IntN(40) {
			for range rng.IntN(4) {
				b.WriteByte("abcx"[rng.IntN(4)])
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, pattern := range []string{`ab\nc`, `b\n+c`, `[ab]\n[^c]*c`, `x\n\n`, `c\nb\na`} {
		out, _ := exec.Command("grep", "-rlzP", pattern, dir).Output()
		var want []string
		for _, l := range strings.Fields(string(out)) {
			want = append(want, filepath.Base(l))
		}
		slices.Sort(want)
		o := Run(context.Background(), Args{Pattern: pattern, Path: &dir, Multiline: true, Output: ptr("files"), Limit: ptr(1000)})
		var got []string
		for _, l := range strings.Split(o.Text, "\n") {
			if strings.HasSuffix(l, ".txt") {
				got = append(got, filepath.Base(l))
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: toolkit found %q, grep -lzP %q", pattern, got, want)
		}
		total += len(want)
	}
	if total == 0 {
		t.Fatal("no pattern matched: the files test nothing")
	}
}

func ptr[T any](v T) *T { return &v }

// TestPastFirstRead: lines past the first read of a file (64 KiB), one of
// them across its end, are found and numbered, in a file that matches
// first there and in one that matches before it too.
func TestPastFirstRead(t *testing.T) {
	dir := t.TempDir()
	filler := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 1024) // 64 KiB
	cross := filler[:len(filler)-3] + "NEEDLE across\n"                                                 // line 1024 holds the end of the first read
	for name, text := range map[string]string{
		"late.txt":  cross + filler + "a NEEDLE late\n",
		"early.txt": "NEEDLE early\n" + cross + "a NEEDLE late\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"NEEDLE", "N[E]EDLE", "(?i)needle"} {
		o := run(t, dir, Args{Pattern: p})
		for _, want := range []string{"late.txt:1024:", "late.txt:2049:a NEEDLE late", "early.txt:1:NEEDLE early", "early.txt:1025:", "early.txt:1026:a NEEDLE late"} {
			if !strings.Contains(o.Text, want) {
				t.Errorf("%s: no %q in\n%s", p, want, o.Text)
			}
		}
	}
}

// TestKeptFirstN: whatever order files' hits come in, kept gives the first
// n of all of them by path and line, and holds at most twice n between.
// A file it says is past the first n (whose hits the search then does not
// lay out) has none of them.
func TestKeptFirstN(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	same := func(a, b *hit) bool { return a.path == b.path && a.line == b.line }
	for round := range 300 {
		var all []*hit
		var files [][]*hit
		for f := range rng.IntN(40) {
			var hits []*hit
			for line := range int64(rng.IntN(12)) {
				hits = append(hits, &hit{path: fmt.Sprintf("f%03d", f), line: line + 1})
			}
			all = append(all, hits...)
			files = append(files, hits)
		}
		rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		k := kept{n: 1 + rng.IntN(60)}
		want := slices.Clone(all) // in order of path and line, as made
		want = want[:min(len(want), k.n)]
		for _, hits := range files {
			if len(hits) == 0 {
				continue
			}
			if k.past(hits[0].path) {
				for _, h := range hits {
					if slices.ContainsFunc(want, func(w *hit) bool { return same(w, h) }) {
						t.Fatalf("round %d: %s:%d is among the first %d, yet its file was past them", round, h.path, h.line, k.n)
					}
				}
				continue
			}
			k.add(hits[0].path, hits)
			if k.total >= 2*k.n {
				t.Fatalf("round %d: %d hits held for n = %d", round, k.total, k.n)
			}
		}
		if got := k.sorted(); !slices.EqualFunc(got, want, same) {
			t.Fatalf("round %d, n %d: got %d hits, want %d", round, k.n, len(got), len(want))
		}
	}
}

// TestKeptPast: once kept holds n hits, a file whose path sorts after
// them is past: of 200 files of 10 hits in random order, with n = 10,
// most are never laid out.
func TestKeptPast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	order := rng.Perm(200)
	k := kept{n: 10}
	past := 0
	for _, f := range order {
		path := fmt.Sprintf("f%03d", f)
		if k.past(path) {
			past++
			continue
		}
		var hits []*hit
		for line := range int64(10) {
			hits = append(hits, &hit{path: path, line: line + 1})
		}
		k.add(path, hits)
	}
	if past < 150 {
		t.Fatalf("%d of 200 files past the first 10 hits", past)
	}
	if got := k.sorted(); len(got) != 10 || got[0].path != "f000" || got[9].line != 10 {
		t.Fatalf("kept %d hits, first %s", len(got), got[0].path)
	}
}

// TestChunks: a file searched a piece of whole lines at a time gives what
// it gives searched whole, wherever the pieces end: matches across a
// piece's end, lines longer than a piece, a NUL in a later piece (binary,
// though it matched before), a UTF-8 byte-order mark, max_count, and each
// output mode. Pieces of a few bytes put an end in every line.
func TestChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	parts := []string{"a", "b", "c", "ab", "abc", " ", "\t", "é", "\n", "\n", "\n", "xyzzy"}
	for i := range 40 {
		var b strings.Builder
		if i%7 == 0 {
			b.WriteString("\uFEFF")
		}
		for range 3000 + rng.IntN(9000) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		if i%5 == 0 {
			b.WriteString(strings.Repeat("abc", rng.IntN(200)) + "\n") // a long line
		}
		if i%9 == 0 {
			b.WriteString("ab\x00ab\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(c, r int) { chunk, firstRead = c, r }(chunk, firstRead)
	for _, p := range []string{"ab", "a.c", "^b", "c$", "(?i)AB", "b+c", "xyzzy", "é"} {
		for _, mode := range []string{"lines", "count", "files"} {
			for _, most := range []*int{nil, ptr(1), ptr(3)} {
				a := Args{Pattern: p, Output: &mode, MaxCount: most, Limit: ptr(100000)}
				chunk, firstRead = 1<<20, 64<<10
				want := run(t, dir, a).Text
				for _, c := range []int{1, 7, 300} {
					chunk, firstRead = c, c
					if got := run(t, dir, a).Text; got != want {
						t.Fatalf("%q %s max %v, pieces of %d bytes:\n%s\nwhole:\n%s", p, mode, most, c, got, want)
					}
				}
			}
		}
	}
}

// TestBinaryRead: a file is read up to its first NUL, as ripgrep reads it,
// and is binary with one, wherever it is: counted, not shown, when what
// comes before it matches; text in UTF-16 with its byte-order mark is read
// whole, its NULs its characters'.
func TestBinaryRead(t *testing.T) {
	dir := t.TempDir()
	late := []byte(strings.Repeat("line\n", 120<<10)) // 600 KiB: past the first read and a piece
	late[500<<10] = 0
	wide := []byte{0xFF, 0xFE}
	for _, r := range "a line\n" {
		wide = append(wide, byte(r), 0)
	}
	for name, content := range map[string][]byte{"early": append([]byte("line\x00"), late...), "late": late, "wide": wide, "text": []byte("a line\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := run(t, dir, Args{Pattern: "line", Limit: ptr(10)})
	d := o.Details.(Details)
	if d.Skipped.Binary != 2 || d.Files != 2 || !strings.Contains(o.Text, "text:1:a line") || !strings.Contains(o.Text, "wide:1:a line") {
		t.Fatalf("%d binary, %d files:\n%s", d.Skipped.Binary, d.Files, o.Text)
	}
}

// FuzzChunks: any file's content gives the same search read a piece at a
// time as read whole.
func FuzzChunks(f *testing.F) {
	f.Add([]byte("ab\nc ab\n\nabab"), uint8(3))
	f.Add([]byte("\uFEFFab\x00ab\n"), uint8(1))
	f.Add([]byte("\xff\xfea\x00b\x00\n\x00"), uint8(2))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte, size uint8) {
		if err := os.WriteFile(filepath.Join(dir, "f"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func(c, r int) { chunk, firstRead = c, r }(chunk, firstRead)
		for _, p := range []string{"ab", "^a", "b$", "a.*b"} {
			a := Args{Pattern: p, Limit: ptr(100000)}
			chunk, firstRead = 1<<20, 64<<10
			want := run(t, dir, a).Text
			chunk, firstRead = int(size)+1, int(size)+1
			if got := run(t, dir, a).Text; got != want {
				t.Fatalf("%q in %q, pieces of %d bytes:\n%s\nwhole:\n%s", p, content, chunk, got, want)
			}
		}
	})
}

// TestReadAllocates: a search allocates about what its files need. A file
// read in pieces keeps its start (for read's rule on binary files) in its
// goroutine's buffers, not in a copy of its own; a line longer than a
// piece grows the buffer to the rest of the file once that is near, not
// by doubling past it.
func TestReadAllocates(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the walk's goroutines, each with its buffers
	allocated := func(dir string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		run(t, dir, Args{Pattern: "NEEDLE"})
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	many := t.TempDir()
	text := []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", 700)) // 70,000 bytes: past the first read
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprint(i)), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each goroutine's buffers (the first read's, then a piece's) and
	// the walk's names: under 1 MiB (about 400 KB); a copy of each
	// file's start would be 300 times 8 KiB more.
	if n := allocated(many); n > 1<<20 {
		t.Errorf("300 files of 70,000 bytes: %d bytes allocated", n)
	}
	long := t.TempDir()
	line := 3 << 20
	if err := os.WriteFile(filepath.Join(long, "f"), []byte(strings.Repeat("y", line)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 512 KiB, 1 MiB, then the whole: doubling would go on to 2 and 4.
	if n := allocated(long); n > uint64(2*line) {
		t.Errorf("a line of %d bytes: %d bytes allocated", line, n)
	}
}

// BenchmarkLongLine: a file of one line of 4 MiB without a match (minified
// code, a data file) is read in growing pieces; where each piece ends is
// looked for in what each read added, once, not again from the start.
func BenchmarkLongLine(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("y", 4<<20)+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	b.SetBytes(4 << 20)
	for b.Loop() {
		if o := Run(context.Background(), Args{Pattern: "NEEDLE"}); !strings.Contains(o.Text, "no matches in 1 file") {
			b.Fatal(o.Text)
		}
	}
}
