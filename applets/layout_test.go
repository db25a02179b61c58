package applets

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// imports are the paths the Go file at path imports.
func imports(t *testing.T, path string) []string {
	t.Helper()
	parsed, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range parsed.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}

// TestAppletsImportNoApplet: an applet imports no other applet, only
// internal/; the presenters (call, info, mcp, schema) reach the applets through
// this registry alone. Test files count too, but for the registry's own.
func TestAppletsImportNoApplet(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, f := range files {
			for _, path := range imports(t, f) {
				switch {
				case path == "toolkit/applets" && (d.Name() == "call" || d.Name() == "info" || d.Name() == "mcp" || d.Name() == "schema"):
				case path == "toolkit/applets" || strings.HasPrefix(path, "toolkit/applets/"):
					t.Errorf("%s imports %s: an applet reaches others through the registry only", f, path)
				}
			}
		}
	}
}

// TestExecOnlyInProc: every child process starts through internal/proc,
// registered with its reaper (which otherwise may collect a child's status
// in os/exec's place): no package but proc imports os/exec, the tests'
// helpers in testsupport included. Tests themselves and bench run programs
// of their own.
func TestExecOnlyInProc(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch filepath.ToSlash(path) {
			case "../.git", "../bench", "../internal/proc", "../testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, p := range imports(t, path) {
			if p == "os/exec" {
				t.Errorf("%s imports os/exec: start a child through internal/proc (proc.Launch, proc.StartChild)", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHistoryIsAWrapper: history is around an applet's run
// (internal/history/track, named by the applets it follows), so the one
// way in, internal/cmdline, imports nothing of it; and history's parts,
// laid out by their formats (index, pack, log, watch), do not reach back
// up into the orchestration that uses them.
func TestHistoryIsAWrapper(t *testing.T) {
	const history = "toolkit/internal/history"
	for _, dir := range []string{"cmdline", "history/index", "history/pack", "history/log", "history/watch"} {
		files, _ := filepath.Glob(filepath.Join("..", "internal", dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in internal/%s", dir)
		}
		for _, f := range files {
			for _, path := range imports(t, f) {
				if path == history || path == history+"/track" || dir == "cmdline" && strings.HasPrefix(path, history+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
