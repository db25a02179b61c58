package diag

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"toolkit/internal/diff"
	"toolkit/internal/outcome"
)

// lineErrors are the diagnostics of a text whose lines "bad N" are errors:
// a checker whose answer follows its lines, as a real one's does.
func lineErrors(text string) []outcome.Diagnostic {
	var ds []outcome.Diagnostic
	for i, l := range strings.Split(text, "\n") {
		if msg, ok := strings.CutPrefix(l, "bad "); ok {
			ds = append(ds, outcome.Diagnostic{Path: "f", Line: i + 1, Col: 1, Severity: Error, Message: msg})
		}
	}
	return ds
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		fresh               []int // the lines of the new ones
		already             int
	}{
		{"an insertion above moves an old error", "a\nbad x\n", "new\nnew\na\nbad x\n", nil, 1},
		{"a deletion above moves an old error", "a\nb\nc\nbad x\n", "c\nbad x\n", nil, 1},
		{"a second instance of an old message is new", "bad x\na\n", "bad x\na\nbad x\n", []int{3}, 1},
		{"an error on a rewritten line is new", "bad x\n", "bad x \n", []int{1}, 0},
		{"a fixed error is gone", "a\nbad x\n", "a\nb\n", nil, 0},
		{"a new error below an old one", "bad x\na\n", "bad x\na\nbad y\n", []int{3}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh, already := Compare(lineErrors(tc.before), diff.Lines([]byte(tc.before), []byte(tc.after)), lineErrors(tc.after))
			var lines []int
			for _, d := range fresh {
				lines = append(lines, d.Line)
			}
			if fmt.Sprint(lines) != fmt.Sprint(tc.fresh) && !(len(lines) == 0 && len(tc.fresh) == 0) || already != tc.already {
				t.Errorf("new on lines %v, %d already; want %v, %d", lines, already, tc.fresh, tc.already)
			}
		})
	}
}

// TestCompareRandom edits random texts of good and bad lines: the new
// errors are exactly those on lines the edit put in, and the old ones
// moved are all already there.
func TestCompareRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var a []string
		for i := range r.IntN(40) {
			if r.IntN(4) == 0 {
				a = append(a, fmt.Sprintf("bad %d", r.IntN(3)))
			} else {
				a = append(a, fmt.Sprint("ok ", i))
			}
		}
		b := append([]string(nil), a...)
		made := 0
		for range 1 + r.IntN(4) {
			at := r.IntN(len(b) + 1)
			switch r.IntN(3) {
			case 0:
				b = append(b[:at], append([]string{fmt.Sprintf("bad new%d", made)}, b[at:]...)...)
				made++
			case 1:
				b = append(b[:at], append([]string{"ok inserted"}, b[at:]...)...)
			default:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			}
		}
		before, after := strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"
		fresh, already := Compare(lineErrors(before), diff.Lines([]byte(before), []byte(after)), lineErrors(after))
		inB := 0
		for _, d := range lineErrors(after) {
			if strings.HasPrefix(d.Message, "new") {
				inB++
			}
		}
		for _, d := range fresh {
			if !strings.HasPrefix(d.Message, "new") {
				t.Fatalf("%q → %q: old error %q at line %d said new", a, b, d.Message, d.Line)
			}
		}
		if len(fresh) != inB || already != len(lineErrors(after))-inB {
			t.Fatalf("%q → %q: %d new, %d already; want %d, %d", a, b, len(fresh), already, inB, len(lineErrors(after))-inB)
		}
	}
}

func TestSyntax(t *testing.T) {
	for _, tc := range []struct {
		path, content string
		want          string // the first diagnostic's line, "" for none
	}{
		{"a.go", "package a\n\nfunc f() {}\n", ""},
		{"a.go", "package a\n\nfunc f() {\n\tx := \n}\n", "a.go:5:1: error: expected operand, found '}'"},
		{"a.json", `{"a": [1, 2]}` + "\n", ""},
		{"a.json", "{\n  \"a\": [1, 2,]\n}\n", "a.json:2:14: error: invalid character ']' looking for beginning of value"},
		{"a.json", "{\"a\": 1}\n{", "a.json:2:1: error: more after the value"},
		{"a.json", "{\"a\": ", "a.json:1:7: error: unexpected end of the file"},
	} {
		c, _ := checkerOf(tc.path)
		ds, err := c.check(context.Background(), file{path: tc.path, rel: tc.path, content: []byte(tc.content)})
		got := ""
		if len(ds) > 0 {
			got = Line(ds[0])
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.path, tc.content, got, err, tc.want)
		}
	}
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		program, path, content string
		want                   string
	}{
		{"sh", "a.sh", "if true; then\n  echo\nfi\n", ""},
		{"sh", "a.sh", "if true; then\n  echo\nfi fi\n", "a.sh:3: error:"},
		{"bash", "a.bash", "if true; then\n  echo\nfi fi\n", "a.bash:3: error: syntax error near unexpected token `fi'"},
		{"python3", "a.py", "def f():\n    return 1\n", ""},
		{"python3", "a.py", "def f(:\n    return 1\n", "a.py:1:7: error: SyntaxError: invalid syntax"},
		{"node", "a.js", "let a = 1;\n", ""},
		{"node", "a.js", "let a = 1;\nlet a = 2;\n", "a.js:2:5: error: SyntaxError: Identifier 'a' has already been declared"},
		{"node", "a.mjs", "import x from 'y';\nfunction f( {\n", "a.mjs:3: error: SyntaxError: Unexpected end of input"},
	} {
		if !found(tc.program) {
			t.Logf("%s is not on PATH: %s not checked", tc.program, tc.path)
			continue
		}
		c, _ := checkerOf(tc.path)
		ds, err := c.check(context.Background(), file{path: "/nowhere/" + tc.path, rel: tc.path, top: "/nowhere", content: []byte(tc.content)})
		got := ""
		if len(ds) > 0 {
			got = Line(ds[0])
		}
		if err != nil || !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s %q: %q, %v; want %q", tc.path, tc.content, got, err, tc.want)
		}
	}
}

// TestCheckDeadline: a checker that outlives the call's wait is said not
// to have answered, and the call does not wait past its deadline for it.
func TestCheckDeadline(t *testing.T) {
	if !found("sh") {
		t.Skip("no sh")
	}
	slow := &checker{by: "slow", tier: "syntax", program: "sh", check: func(ctx context.Context, f file) ([]outcome.Diagnostic, error) {
		_, err := run(ctx, nil, "sh", "-c", "sleep 30")
		return nil, err
	}}
	byExt[".slow"] = slow
	defer delete(byExt, ".slow")
	began := time.Now()
	d := Check(context.Background(), []Change{{Path: "/x/a.slow", Rel: "a.slow", After: []byte("x")}}, Ask{Mode: New, Wait: 200 * time.Millisecond, Servers: []Spec{}})
	if took := time.Since(began); took > 20*time.Second {
		t.Fatalf("the check waited %s for a checker that sleeps 30 s", took)
	}
	if d == nil || len(d.NotChecked) != 1 || d.NotChecked[0].Why != "slow did not answer in 0.2 s" {
		t.Fatalf("got %+v", d)
	}
	if got := Lines(d, false); len(got) != 1 || got[0] != "[diagnostics: not checked — a.slow: slow did not answer in 0.2 s]" {
		t.Fatalf("lines %q", got)
	}
}

func TestCheckNew(t *testing.T) {
	before := []byte("package a\n\nfunc f() {\n\tx := \n}\n")
	after := []byte("package a\n\n// A comment moves the old error down.\nfunc f() {\n\tx := \n}\n\nfunc g( {}\n")
	d := Check(context.Background(), []Change{{Path: "/x/a.go", Rel: "a.go", Before: before, Existed: true, BeforeKnown: true, After: after}}, Ask{Mode: New, Wait: 5 * time.Second, Servers: []Spec{}})
	got := strings.Join(Lines(d, false), "\n")
	want := "[diagnostics: 1 new error in a.go (syntax only: gofmt; 0.0 s); 1 already there]\na.go:8:"
	if !strings.HasPrefix(got, want) || d.Already != 1 || len(d.New) != 1 {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// A file of no language says nothing; one of a language with no
	// checker says so.
	if d := Check(context.Background(), []Change{{Path: "/x/README.md", Rel: "README.md", After: []byte("# x\n")}}, Ask{Mode: New, Wait: time.Second, Servers: []Spec{}}); d != nil {
		t.Fatalf("README.md: %+v", d)
	}
	d = Check(context.Background(), []Change{{Path: "/x/a.kt", Rel: "a.kt", After: []byte("x")}}, Ask{Mode: New, Wait: time.Second, Servers: []Spec{}})
	if got := Lines(d, false); len(got) != 1 || got[0] != "[diagnostics: not checked — a.kt: no checker for .kt]" {
		t.Fatalf("a.kt: %q", got)
	}
}

// FuzzJSONSyntax: any file's bytes get at most one diagnostic, at a place
// in the file (a line end counts as the line's last column, the end of the
// file as one past its last byte).
func FuzzJSONSyntax(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,]}`, "{\n", "[1]\n{", "\xff", "", "  \n", `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := jsonSyntax(context.Background(), file{path: "f.json", rel: "f.json", content: b})
		if err != nil || len(ds) > 1 {
			t.Fatalf("%q: %v, %v", b, ds, err)
		}
		for _, d := range ds {
			lines := strings.Split(string(b), "\n")
			if d.Line < 1 || d.Line > len(lines) || d.Col < 1 || d.Col > len(lines[d.Line-1])+1 {
				t.Fatalf("%q: %d:%d is not in the file", b, d.Line, d.Col)
			}
		}
	})
}

// FuzzCompare: whatever the texts, every diagnostic after is new or
// already there, and an unchanged text brings none.
func FuzzCompare(f *testing.F) {
	f.Add("ok\nbad x\n", "new\nok\nbad x\nbad y\n")
	f.Add("bad a\nbad a\n", "bad a\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		m := diff.Lines([]byte(before), []byte(after))
		fresh, already := Compare(lineErrors(before), m, lineErrors(after))
		if len(fresh)+already != len(lineErrors(after)) {
			t.Fatalf("%q → %q: %d new + %d already of %d", before, after, len(fresh), already, len(lineErrors(after)))
		}
		if before == after && len(fresh) > 0 {
			t.Fatalf("%q unchanged: %d new", before, len(fresh))
		}
	})
}
