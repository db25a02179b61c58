package ignore

import (
	"strings"
	"testing"
)

// TestPatterns: gitignore(5)'s rules, one case at a time.
func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		path    string
		isDir   bool
		ignored bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/down/a.log", false, true},
		{"*.log", "a.log/x", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false}, // directories only
		{"build/", "src/build", true, true},
		{"/build", "build", false, true},
		{"/build", "src/build", false, false}, // anchored
		{"doc/frotz", "doc/frotz", false, true},
		{"doc/frotz", "a/doc/frotz", false, false}, // a slash in the middle anchors it
		{"**/foo", "foo", false, true},
		{"**/foo", "x/y/foo", false, true},
		{"**/foo/bar", "x/foo/bar", false, true},
		{"abc/**", "abc/x", false, true},
		{"abc/**", "abc/x/y", false, true},
		{"abc/**", "abc", true, false}, // what is inside, not the directory
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a**b", "axyb", false, true}, // ** not a whole element is *
		{"a**b", "ax/yb", false, false},
		{"?.c", "x.c", false, true},
		{"?.c", "xy.c", false, false},
		{"[ab].c", "b.c", false, true},
		{"[!ab].c", "b.c", false, false},
		{"[^ab].c", "c.c", false, true},
		{"[]a].c", "].c", false, true},
		{`\#x`, "#x", false, true},
		{`\!x`, "!x", false, true},
		{"x\\ ", "x ", false, true}, // an escaped trailing space stays
		{"x  ", "x", false, true},   // unescaped ones go
		{"{a,b}", "{a,b}", false, true},
		{"{a,b}", "a", false, false}, // no alternatives in gitignore
		{"x\r", "x", false, true},    // a CRLF file
		{"[abc", "[abc", false, false},
	} {
		f := Parse("", tc.pattern)
		if _, got := f.Match(tc.path, tc.isDir); got != tc.ignored {
			t.Errorf("%q on %q (dir %v): ignored %v, want %v", tc.pattern, tc.path, tc.isDir, got, tc.ignored)
		}
	}
}

// TestLastWins: within a file the last pattern that matches decides, and a
// deeper file decides before one above it; a file's patterns apply only
// under its directory.
func TestLastWins(t *testing.T) {
	f := Parse("", "*.log\n!keep.log\n# a comment\n\n")
	if _, ig := f.Match("x.log", false); !ig {
		t.Error("x.log not ignored")
	}
	if decided, ig := f.Match("keep.log", false); !decided || ig {
		t.Error("keep.log ignored")
	}
	stack := Stack{Parse("", "*.tmp\n"), Parse("sub", "!*.tmp\n/only\n")}
	for path, want := range map[string]bool{"a.tmp": true, "sub/a.tmp": false, "sub/only": true, "only": false, "sub/x/only": false} {
		if got := stack.Ignored(path, false); got != want {
			t.Errorf("%s: ignored %v, want %v", path, got, want)
		}
	}
}

// FuzzParse: any ignore file parses without a panic; each pattern it holds
// matches a path or not whatever it is; a negated pattern matches what the
// same pattern without ! matches.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"*.log\n!keep.log\n", "/build/\n**/x/**\n", "[!a-z]?\\*\n", "a/**/b\r\n", "\\!x \\ \n", "[]\n["} {
		f.Add(s, "a/b/keep.log")
	}
	f.Fuzz(func(t *testing.T, text, path string) {
		file := Parse("", text)
		for _, p := range file.Patterns {
			if p.Line < 1 || p.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("pattern %q on line %d", p.Text, p.Line)
			}
			plain := p
			plain.Negate = false
			for _, isDir := range []bool{false, true} {
				if p.Matches(path, isDir) != plain.Matches(path, isDir) {
					t.Fatalf("%q and its negation differ on %q", p.Text, path)
				}
			}
			if p.DirOnly && p.Matches(path, false) {
				t.Fatalf("%q is for directories, and matches the file %q", p.Text, path)
			}
		}
		_, _ = file.Match(path, false)
	})
}
