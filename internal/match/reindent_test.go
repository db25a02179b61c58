package match

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReindentAsModelsQuote: blocks of Python, YAML and Go at random
// depths, quoted as models quote them (from the first line's first
// character that is not blank, or with its indentation; the whole quote
// shifted; tabs for spaces), and edited at random as the model writes the
// edit in its quote's own indentation: the result is the verbatim edit,
// in the file's indentation, and parses (go/parser for Go; an
// indentation check for the others), or the edit is refused. Never a
// success that changes the new text's relative indentation.
func TestReindentAsModelsQuote(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 4000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for c := range n {
		lang := []string{"python", "yaml", "go"}[c%3]
		tc := modelEdit(rng, lang)
		text := []byte(tc.file)
		level, spans := Find(text, []byte(tc.old))
		if len(spans) != 1 {
			counts["not found once"]++
			continue
		}
		repl, err := Replacement(text, spans[0], level, []byte(tc.old), []byte(tc.new))
		if err != nil {
			counts["refused"]++
			continue
		}
		got := string(text[:spans[0].Start]) + string(repl) + string(text[spans[0].End:])
		if got != tc.want {
			t.Fatalf("case %d (%s, %s, at %s):\nfile: %q\nold: %q\nnew: %q\ngot: %q\nwant: %q", c, lang, tc.how, level, tc.file, tc.old, tc.new, got, tc.want)
		}
		if err := parses(lang, got); err != nil {
			t.Fatalf("case %d (%s): the result does not parse: %v\n%s", c, lang, err, got)
		}
		counts[level.String()]++
	}
	t.Logf("%d cases: %v", n, counts)
	if counts["indentation"] == 0 || counts["refused"] == 0 {
		t.Fatalf("the cases never reached both re-indenting and refusing: %v", counts)
	}
}

// anEdit is a file, an edit of it as a model writes it, and the file the
// verbatim edit makes.
type anEdit struct {
	file, old, new, want, how string
}

// block is lines, each with its depth in the block.
type block []struct {
	depth int
	text  string
}

// modelEdit makes a file holding a block of lang at a random depth, and
// an edit of a part of it quoted as a model quotes.
func modelEdit(rng *rand.Rand, lang string) anEdit {
	unit := []string{"    ", "  ", "\t"}[rng.IntN(3)]
	if lang == "yaml" && unit == "\t" {
		unit = "  " // YAML takes no tabs
	}
	var b block
	depth := 0
	for i := range 4 + rng.IntN(8) {
		if i > 0 {
			depth = max(0, min(depth+rng.IntN(3)-1, 4))
		}
		b = append(b, struct {
			depth int
			text  string
		}{depth, fmt.Sprintf("s%d_%d", i, rng.IntN(1000))})
	}
	base := 1 + rng.IntN(3)
	render := func(lines block, shift int, u string, stripFirst bool) string {
		var out strings.Builder
		for k, l := range lines {
			d := base + l.depth + shift
			if !(k == 0 && stripFirst) {
				out.WriteString(strings.Repeat(u, max(d, 0)))
			}
			out.WriteString(stmt(lang, l.text) + "\n")
		}
		return out.String()
	}
	// The part quoted, and the edit: a line added after its first, or its
	// last replaced, at a depth it may take.
	i := rng.IntN(len(b) - 1)
	j := i + 1 + rng.IntN(len(b)-i-1)
	part := b[i : j+1]
	edited := append(block{}, part...)
	switch rng.IntN(2) {
	case 0:
		d := edited[0].depth + rng.IntN(2)
		edited = append(edited[:1], append(block{{d, "added"}}, edited[1:]...)...)
	default:
		edited[len(edited)-1].text = "changed"
	}
	edited = append(block{{edited[0].depth, "first"}}, edited...) // a line put before, as in the report
	quote := b[i : j+1]
	stripFirst := rng.IntN(2) == 0
	shift := 0
	if rng.IntN(2) == 0 {
		shift = rng.IntN(5) - 2 // the model's quote shifted as a block
	}
	low := 99
	for k, l := range edited {
		if k > 0 || !stripFirst {
			low = min(low, base+l.depth)
		}
	}
	shift = max(shift, -low) // never shifted past column 0: a model's edit says its depths
	u := unit
	how := fmt.Sprintf("strip first %v, shift %d", stripFirst, shift)
	if unit != "\t" && lang != "yaml" && rng.IntN(4) == 0 {
		u = "\t" // spaces quoted as tabs
		how += ", tabs"
	}
	whole := func(lines block) string { return render(lines, 0, unit, false) }
	file := head(lang) + whole(b[:i]) + whole(part) + whole(b[j+1:]) + tail(lang)
	want := head(lang) + whole(b[:i]) + whole(edited) + whole(b[j+1:]) + tail(lang)
	old := strings.TrimSuffix(render(quote, shift, u, stripFirst), "\n")
	new := strings.TrimSuffix(render(edited, shift, u, stripFirst), "\n")
	return anEdit{file: file, old: old, new: new, want: want, how: how}
}

// stmt is a line of lang naming s.
func stmt(lang, s string) string {
	switch lang {
	case "python":
		return "if " + s + ":"
	case "yaml":
		return s + ":"
	}
	return "{ _ = " + s + " }"
}

func head(lang string) string {
	switch lang {
	case "python":
		return "def f():\n"
	case "yaml":
		return "root:\n"
	}
	return "package p\n\nfunc f() {\n"
}

func tail(lang string) string {
	switch lang {
	case "python":
		return "    pass\n"
	case "yaml":
		return ""
	}
	return "}\n"
}

// parses checks a result: Go through go/parser; Python and YAML, that
// each line is indented at most one level deeper than the line before
// (their blocks open by a line ending in a colon), in one kind of blank.
func parses(lang, src string) error {
	if lang == "go" {
		_, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
		return err
	}
	prev := -1
	for n, line := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		ind := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if strings.Contains(ind, " ") && strings.Contains(ind, "\t") {
			return fmt.Errorf("line %d mixes tabs and spaces", n+1)
		}
		d := len(ind)
		if prev >= 0 && d > prev && !bytes.HasSuffix([]byte(strings.TrimSpace(prevLine(src, n))), []byte(":")) {
			return fmt.Errorf("line %d is indented under a line that opens no block", n+1)
		}
		prev = d
	}
	return nil
}

func prevLine(src string, n int) string {
	lines := strings.Split(src, "\n")
	if n == 0 {
		return ""
	}
	return lines[n-1]
}
