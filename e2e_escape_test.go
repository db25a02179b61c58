package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// escapeWorld makes a root with links that lead out of it, and a directory
// beside it that nothing inside may reach.
func escapeWorld(t *testing.T) (inside, outside string) {
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
	return inside, outside
}

// confined runs toolkit APPLET --json --root inside with the JSON input in,
// and returns its outcome object: ok, text, error.
func confined(t *testing.T, inside, applet string, in map[string]any) (ok bool, text, msg string) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := toolkitCmd(applet, "--json", "--root", inside)
	cmd.Dir = inside
	cmd.Stdin = bytes.NewReader(data)
	out, _ := cmd.Output()
	var o struct {
		OK    bool   `json:"ok"`
		Text  string `json:"text"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("%s %s: %q: %v", applet, data, out, err)
	}
	return o.OK, o.Text, o.Error
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
// write alike, with "outside the root", and nothing outside changes; shell
// refuses a cwd outside.
func TestEscapes(t *testing.T) {
	t.Parallel()
	inside, outside := escapeWorld(t)
	for _, path := range escapes(inside, outside) {
		if ok, text, msg := confined(t, inside, "read", map[string]any{"path": path}); ok || !strings.HasSuffix(msg, ": outside the root") {
			t.Errorf("read %q: %v %q %q", path, ok, msg, text)
		}
		if ok, text, msg := confined(t, inside, "write", map[string]any{"path": path, "content": "pwned\n"}); ok || !strings.HasSuffix(msg, ": outside the root") {
			t.Errorf("write %q: %v %q %q", path, ok, msg, text)
		}
		if ok, text, _ := confined(t, inside, "shell", map[string]any{"command": "pwd", "cwd": path}); ok {
			t.Errorf("shell cwd %q: %q", path, text)
		}
	}
	outsideUnchanged(t, outside)

	// Inside is still fine, relative or absolute.
	for _, path := range []string{"ok.txt", filepath.Join(inside, "ok.txt"), "a/../ok.txt", "a/self/../ok.txt"} {
		if ok, text, msg := confined(t, inside, "read", map[string]any{"path": path}); !ok || !strings.HasPrefix(text, "     1\tfine\n") {
			t.Errorf("read %q inside the root: %q %q", path, text, msg)
		}
	}
	if ok, _, msg := confined(t, inside, "write", map[string]any{"path": "a/b/new.txt", "content": "x"}); !ok {
		t.Errorf("write inside the root: %s", msg)
	}
}

// TestSwapRace: while writes into d/ run, another goroutine keeps swapping
// d between a directory and a link to the outside. No write may land outside.
func TestSwapRace(t *testing.T) {
	t.Parallel()
	inside, outside := escapeWorld(t)
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
			// A write process takes a few milliseconds: swap a few times
			// during each.
			time.Sleep(500 * time.Microsecond)
		}
	}()
	results := map[string]int{}
	writes := 20 // 200 at full size: ./check --ci
	if full() {
		writes = 200
	}
	for i := range writes {
		path := "d/f.txt"
		if i%3 == 0 {
			path = "d/sub/f.txt" // parent directories created on the way
		}
		ok, _, msg := confined(t, inside, "write", map[string]any{"path": path, "content": "pwned\n"})
		switch {
		case ok:
			results["written inside"]++
		case strings.HasSuffix(msg, "outside the root"):
			results["outside the root"]++
		default:
			results["other error"]++ // the directory vanished under it
		}
		if ok, text, _ := confined(t, inside, "read", map[string]any{"path": "d/f.txt"}); ok && strings.Contains(text, "secret") {
			t.Fatal("read through the swapped link")
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d writes during the swaps: %v", writes, results)
	outsideUnchanged(t, outside)
}
