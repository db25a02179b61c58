package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"toolkit/applets/read"
	"toolkit/applets/shell"
	"toolkit/applets/write"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
)

// escapeWorld makes a root with links that lead out of it, and a directory
// beside it that nothing inside may reach.
func escapeWorld(t *testing.T) (r *root.Root, inside, outside string) {
	t.Helper()
	base := t.TempDir()
	inside, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{inside, outside, filepath.Join(inside, "a", "b"), filepath.Join(inside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644))
	must(os.WriteFile(filepath.Join(inside, "ok.txt"), []byte("fine\n"), 0o644))
	links := map[string]string{
		"up":             "..",
		"up2":            "../..",
		"abs":            outside,
		"abs-inside":     filepath.Join(inside, "ok.txt"), // absolute, even pointing inside
		"to-secret":      "../outside/secret",
		"a/b/deep":       "../../../outside",
		"a/b/deep-file":  "../../../outside/secret",
		"chain1":         "chain2",
		"chain2":         "up/outside/secret",
		"sub/dotdot":     "../../outside",
		"etc":            "/etc",
		"slash":          "/",
		"a/self":         ".",
		"a/loop":         "loop",
		"new-out":        "../outside/created-through-link",
		"dir-out/ignore": "",
	}
	for name, target := range links {
		if target == "" {
			continue
		}
		must(os.Symlink(target, filepath.Join(inside, name)))
	}
	r, err := root.Open(inside)
	must(err)
	t.Cleanup(func() { r.Close() })
	return r, inside, outside
}

// The attempts: each names, from inside the root, something outside it.
func escapes(inside, outside string) []string {
	return []string{
		"../outside/secret", "../../etc/passwd", "/etc/passwd", outside + "/secret", outside,
		"a/../../outside/secret", "a/b/../../../outside/secret", "./../outside/secret", ".//..//outside/secret",
		"nope/../../outside/secret", "sub/../../outside/secret",
		"up/outside/secret", "up2", "up/outside", "abs/secret", "abs", "to-secret",
		"a/b/deep/secret", "a/b/deep-file", "chain1", "sub/dotdot/secret", "etc/passwd", "etc",
		"slash/etc/passwd", "a/self/../../outside/secret", "abs-inside", "new-out",
		"up/outside/new-file", "abs/new-file", "a/b/deep/new-file", "sub/dotdot/new-file",
		filepath.Join(inside, "..", "outside", "secret"), "/" + strings.Repeat("../", 20) + "etc/passwd",
	}
}

func outsideUnchanged(t *testing.T, outside string) {
	t.Helper()
	names, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "secret" {
		t.Fatalf("the outside directory holds %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret\n" {
		t.Fatalf("the secret was overwritten: %q", b)
	}
}

// TestEscapes: every attempt to leave the root is refused, by read and by
// write alike, with "outside the root", and nothing outside changes.
func TestEscapes(t *testing.T) {
	r, inside, outside := escapeWorld(t)
	attempts := escapes(inside, outside)
	if len(attempts) < 30 {
		t.Fatalf("only %d attempts", len(attempts))
	}
	for _, path := range attempts {
		o := read.Run(read.Args{Path: path, Host: read.Options{Root: r}})
		if o.Kind != outcome.ToolError || !strings.HasSuffix(o.Message, ": outside the root") {
			t.Errorf("read %q: %v %q %q", path, o.Kind, o.Message, o.Text)
		}
		o = write.Run(write.Args{Path: path, Content: "pwned\n", Host: write.Options{Root: r}})
		if o.Kind != outcome.ToolError || !strings.HasSuffix(o.Message, ": outside the root") {
			t.Errorf("write %q: %v %q %q", path, o.Kind, o.Message, o.Text)
		}
		o = shell.Run(t.Context(), shell.Args{Command: "pwd", Cwd: path, Host: shell.Options{Root: r}})
		if o.Kind != outcome.ToolError {
			t.Errorf("shell cwd %q: %v %q", path, o.Kind, o.Text)
		}
	}
	outsideUnchanged(t, outside)

	// Inside is still fine, relative or absolute.
	for _, path := range []string{"ok.txt", filepath.Join(inside, "ok.txt"), "a/../ok.txt", "a/self/../ok.txt"} {
		if o := read.Run(read.Args{Path: path, Host: read.Options{Root: r}}); o.Kind != outcome.Done || o.Text != "     1\tfine\n" {
			t.Errorf("read %q inside the root: %+v", path, o)
		}
	}
	if o := write.Run(write.Args{Path: "a/b/new.txt", Content: "x", Host: write.Options{Root: r}}); o.Kind != outcome.Done {
		t.Errorf("write inside the root: %+v", o)
	}
}

// TestSwapRace: while writes into d/ run, another goroutine keeps swapping
// d between a directory and a link to the outside. No write may land outside.
func TestSwapRace(t *testing.T) {
	r, inside, outside := escapeWorld(t)
	d := filepath.Join(inside, "d")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(d)
			if i%2 == 0 {
				_ = os.Mkdir(d, 0o755)
			} else {
				_ = os.Symlink(outside, d)
			}
		}
	}()
	results := map[string]int{}
	for i := range 400 {
		path := "d/f.txt"
		if i%3 == 0 {
			path = "d/sub/f.txt" // parent directories created on the way
		}
		o := write.Run(write.Args{Path: path, Content: "pwned\n", Host: write.Options{Root: r}})
		switch {
		case o.Kind == outcome.Done:
			results["written inside"]++
		case strings.HasSuffix(o.Message, "outside the root"):
			results["outside the root"]++
		default:
			results["other error"]++ // the directory vanished under it
		}
		rd := read.Run(read.Args{Path: "d/f.txt", Host: read.Options{Root: r}})
		if rd.Kind == outcome.Done && strings.Contains(rd.Text, "secret") {
			t.Fatal("read through the swapped link")
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("400 writes during the swaps: %v", results)
	outsideUnchanged(t, outside)
}
