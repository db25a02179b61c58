package glob

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"toolkit/internal/outcome"
	"toolkit/testsupport/gittest"
)

func run(t *testing.T, dir string, a Args) outcome.Outcome {
	t.Helper()
	a.Path = &dir
	o := Run(context.Background(), a)
	if o.Kind != outcome.Done {
		t.Fatalf("%+v: %s", a, o.Message)
	}
	return o
}

// paths are the paths a glob listed, from dir, without the last lines.
func paths(dir, text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			out = append(out, strings.TrimPrefix(l, dir+"/"))
		}
	}
	return out
}

// TestAgainstGitLsFiles: on random repositories, glob lists exactly the
// files git ls-files lists whose paths match the pattern.
func TestAgainstGitLsFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	patterns := []string{"**", "**/*.go", "*.txt", "sub/**", "**/sub/*", "*/*.{go,txt}", "**/[ab].*", "dir?/**/*.log", "**/.h"}
	names := []string{"a.go", "b.txt", ".h", "c.log", "sub", "dir1", "dir2"}
	repos := 30
	if testing.Short() {
		repos = 8
	}
	total := 0
	for seed := range repos {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		dir := t.TempDir()
		var fill func(d string, depth int)
		fill = func(d string, depth int) {
			for _, n := range names {
				p := filepath.Join(d, n)
				switch {
				case strings.HasPrefix(n, "sub") || strings.HasPrefix(n, "dir"):
					if depth < 3 && rng.IntN(2) == 0 {
						os.Mkdir(p, 0o755)
						fill(p, depth+1)
					}
				case rng.IntN(3) > 0:
					os.WriteFile(p, []byte("x\n"), 0o644)
				}
			}
		}
		fill(dir, 0)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n!dir1/**/c.log\nsub/sub/\n"), 0o644)
		gittest.Run(t, dir, "init", "-q", ".")
		gittest.Run(t, dir, "add", "-A")
		tracked := strings.Split(strings.TrimSuffix(gittest.Run(t, dir, "ls-files"), "\n"), "\n")
		for _, p := range patterns {
			var want []string
			for _, f := range tracked {
				if doublestar.MatchUnvalidated(p, f) {
					want = append(want, f)
				}
			}
			o := run(t, dir, Args{Pattern: p, Sort: ptr("path"), Hidden: true, Limit: ptr(100000)})
			if got := paths(dir, o.Text); !slices.Equal(got, want) {
				t.Fatalf("seed %d, %q:\nglob: %q\ngit:  %q", seed, p, got, want)
			}
			total += len(want)
		}
	}
	t.Logf("%d repositories, %d patterns: %d paths, all as git ls-files gave them", repos, len(patterns), total)
}

func ptr[T any](v T) *T { return &v }

// TestNewestFirst: by default the most recently changed come first; a
// page and the next offset.
func TestNewestFirst(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for i, name := range []string{"old.txt", "mid.txt", "new.txt"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o644)
		at := now.Add(time.Duration(i-3) * time.Hour)
		os.Chtimes(p, at, at)
	}
	o := run(t, dir, Args{Pattern: "*.txt", Limit: ptr(2)})
	if got := paths(dir, o.Text); !slices.Equal(got, []string{"new.txt", "mid.txt"}) || !strings.HasSuffix(o.Text, "[3 matches, newest first; shown 1-2; next: offset 3]\n") {
		t.Fatalf("%q", o.Text)
	}
	o = run(t, dir, Args{Pattern: "*.txt", Offset: ptr(3)})
	if got := paths(dir, o.Text); !slices.Equal(got, []string{"old.txt"}) || !strings.HasSuffix(o.Text, "[3 matches, newest first; shown 3-3]\n") {
		t.Fatalf("%q", o.Text)
	}
}
