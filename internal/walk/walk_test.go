package walk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/testsupport/gittest"
)

// files walks dir as grep and glob do (hidden names too, as git lists
// them) and returns the regular files it finds, sorted.
func files(t *testing.T, dir string, o Options) []string {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	above, top := Above(dir, "", o)
	var mu sync.Mutex
	var out []string
	Walk(context.Background(), r, above, top, o, func(e Entry) bool {
		if e.Type.IsRegular() {
			mu.Lock()
			out = append(out, e.Path)
			mu.Unlock()
		}
		return true
	})
	slices.Sort(out)
	return out
}

// The pieces random trees and patterns are made of.
var (
	names    = []string{"a", "b", "ab", "c.txt", "d.log", "x y"}
	elements = []string{"a", "b", "ab", "*", "?", "a*", "*.txt", "*.log", "[ab]", "[!a]*", "**", "c.txt"}
)

// randomPattern makes a gitignore line of the kinds gitignore(5) names.
func randomPattern(rng *rand.Rand) string {
	n := 1 + rng.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = elements[rng.IntN(len(elements))]
	}
	p := strings.Join(parts, "/")
	if rng.IntN(4) == 0 {
		p = "/" + p
	}
	if rng.IntN(4) == 0 {
		p += "/"
	}
	if rng.IntN(4) == 0 {
		p = "!" + p
	}
	return p
}

// randomTree makes files and .gitignore files under dir.
func randomTree(t *testing.T, rng *rand.Rand, dir string, depth int) {
	for _, name := range names {
		p := filepath.Join(dir, name)
		switch {
		case depth < 3 && rng.IntN(3) == 0:
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			randomTree(t, rng, p, depth+1)
		case rng.IntN(2) == 0:
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rng.IntN(2) == 0 {
		var lines []string
		for range 1 + rng.IntN(5) {
			lines = append(lines, randomPattern(rng))
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgainstGit: on random trees with random .gitignore files (nested,
// negated, anchored, directory-only, with **), the walk finds exactly the
// files git does not ignore (git ls-files --others --exclude-standard), and
// from a directory inside the repository, exactly those of git's under it.
func TestAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	trees := 150
	if testing.Short() {
		trees = 40
	}
	compared, ignored := 0, 0
	defer func() { t.Logf("%d trees: %d files git lists, %d it ignores, all agreed", trees, compared, ignored) }()
	for seed := range trees {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		dir := t.TempDir()
		randomTree(t, rng, dir, 0)
		exclude := []string{randomPattern(rng)}
		gittest.Run(t, dir, "init", "-q", ".")
		if err := os.WriteFile(filepath.Join(dir, ".git/info/exclude"), []byte(strings.Join(exclude, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// A global excludes file, read by git and by the walk alike.
		global := t.TempDir()
		t.Setenv("XDG_CONFIG_HOME", global)
		if err := os.MkdirAll(filepath.Join(global, "git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(global, "git", "ignore"), []byte(randomPattern(rng)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := gittest.Output(dir, []string{"XDG_CONFIG_HOME=" + global}, "ls-files", "-z", "--others", "--exclude-standard")
		if err != nil {
			t.Fatal(err)
		}
		want := splitZ(string(out))
		got := files(t, dir, Options{Hidden: true})
		compared += len(want)
		for _, p := range files(t, dir, Options{Hidden: true, NoIgnore: true}) {
			if !strings.HasPrefix(p, ".git/") && !slices.Contains(want, p) {
				ignored++
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: the walk and git disagree\n%s\nwalk: %q\ngit:  %q", seed, describe(t, dir), got, want)
		}
		// From a directory below the top: the ignore files above apply.
		// (A directory git ignores is walked all the same when asked for:
		// the comparison is for one it does not.)
		sub := ""
		for _, name := range names {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() && !gitIgnores(dir, name) {
				sub = name
				break
			}
		}
		if sub == "" {
			continue
		}
		var under []string
		for _, p := range want {
			if rest, ok := strings.CutPrefix(p, sub+"/"); ok {
				under = append(under, rest)
			}
		}
		if got := files(t, filepath.Join(dir, sub), Options{Hidden: true}); !slices.Equal(got, under) {
			t.Fatalf("seed %d, from %s: the walk and git disagree\n%s\nwalk: %q\ngit:  %q", seed, sub, describe(t, dir), got, under)
		}
	}
}

// gitIgnores asks git whether it ignores the directory name, with the
// global excludes file the test set.
func gitIgnores(dir, name string) bool {
	_, err := gittest.Output(dir, []string{"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}, "check-ignore", "-q", name+"/")
	return err == nil
}

func splitZ(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// describe lists a tree's ignore files, for a failure's message.
func describe(t *testing.T, dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			b.WriteString(".git/info/exclude:\n")
			x, _ := os.ReadFile(filepath.Join(p, "info/exclude"))
			b.Write(x)
			return filepath.SkipDir
		}
		if d.Name() == ".gitignore" {
			x, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "%s:\n%s", rel, x)
		}
		return nil
	})
	return b.String()
}

// TestIgnoreFile: .ignore is read as .gitignore is, and decides before it;
// hidden names and .git are left out unless asked for; no_ignore reads no
// ignore file.
func TestIgnoreFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		".gitignore": "*.log\n", ".ignore": "!keep.log\nsecret\n", "a.log": "", "keep.log": "", "secret": "", "plain": "",
		".hidden": "", ".git/config": "", "sub/.gitignore": "/plain\n", "sub/plain": "", "sub/x.log": "",
		// Over 1 MiB, as generated ignore files are: still read.
		"big/.gitignore": strings.Repeat("# padding\n", 150000) + "gone\n", "big/gone": "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		o    Options
		want []string
	}{
		{Options{}, []string{"keep.log", "plain"}},
		{Options{Hidden: true}, []string{".gitignore", ".hidden", ".ignore", "big/.gitignore", "keep.log", "plain", "sub/.gitignore"}},
		{Options{NoIgnore: true}, []string{"a.log", "big/gone", "keep.log", "plain", "secret", "sub/plain", "sub/x.log"}},
		{Options{NoIgnore: true, Hidden: true}, []string{".git/config", ".gitignore", ".hidden", ".ignore", "a.log", "big/.gitignore", "big/gone", "keep.log", "plain", "secret", "sub/.gitignore", "sub/plain", "sub/x.log"}},
	} {
		if got := files(t, dir, tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestLinksNotFollowed: a link to a directory (inside or out) is an entry,
// never a way in; a FIFO is an entry ReadFile refuses without waiting.
func TestLinksNotFollowed(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in/f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"out": outside, "again": "in", "file": filepath.Join(outside, "secret")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec.Command("mkfifo", filepath.Join(dir, "fifo")).Run(); err != nil {
		t.Skip("no mkfifo")
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	seen := map[string]string{}
	Walk(context.Background(), r, nil, "", Options{}, func(e Entry) bool {
		kind := "file"
		switch {
		case e.Type.IsDir():
			kind = "dir"
		case e.Type&os.ModeSymlink != 0:
			kind = "link"
		case !e.Type.IsRegular():
			kind = "other"
		}
		if _, err := e.ReadFile(1 << 20); (kind == "file") != (err == nil) {
			t.Errorf("%s (%s): read: %v", e.Path, kind, err)
		}
		mu.Lock()
		seen[e.Path] = kind
		mu.Unlock()
		return true
	})
	want := map[string]string{"in": "dir", "in/f": "file", "out": "link", "again": "link", "file": "link", "fifo": "other"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("%v, want %v", seen, want)
	}
}

// TestDeepIgnoreFiles: a tree 2,000 directories deep with an ignore file in
// each is walked in time near-linear in its names (each name was matched
// against every ignore file above it along its whole path: past 60 s). The
// walk is given a short limit and must not be stopped by it; what the
// deepest files say still decides.
func TestDeepIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", ".")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	const depth = 2000
	for i := range depth {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		sub, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = sub
		for name, text := range map[string]string{".gitignore": "*.log\n!keep.log\nbuild/\n", "f.txt": "", "x.log": "", "keep.log": ""} {
			if i == depth-1 && name == ".gitignore" {
				text = "f.txt\n"
			}
			f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			unix.Write(f, []byte(text))
			unix.Close(f)
		}
	}
	unix.Close(fd)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	count := map[string]int{}
	Walk(ctx, r, nil, "", Options{}, func(e Entry) bool {
		mu.Lock()
		count[e.Name]++
		mu.Unlock()
		return true
	})
	if ctx.Err() != nil {
		t.Fatalf("stopped by the limit: %v", ctx.Err())
	}
	if count["f.txt"] != depth-1 || count["keep.log"] != depth || count["x.log"] != 0 {
		t.Fatalf("found %v", count)
	}
}

// TestRepoRules: what git reads besides the .gitignore files. A nested
// repository is a root of its own: the outer .gitignore does not reach
// into it, its own info/exclude does, from the outer top as from inside.
// A worktree takes its repository's info/exclude; an info/exclude that is a
// link is read; the global excludes file ($XDG_CONFIG_HOME/git/ignore) is
// read. Each as git ls-files --others --exclude-standard has it.
func TestRepoRules(t *testing.T) {
	dir := t.TempDir()
	global := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", global)
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(global, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(global, "git", "ignore"), []byte("*.global\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main")
	write("main/.gitignore", "*.log\n")
	write("main/kept.txt", "")
	write("main/a.log", "")
	write("main/x.global", "")
	write("main/linked.txt", "")
	write("main-exclude", "linked.txt\nwt-only.txt\n")
	gittest.Run(t, main, "init", "-q", ".")
	if err := os.Remove(filepath.Join(main, ".git/info/exclude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../main-exclude", filepath.Join(main, ".git/info/exclude")); err != nil {
		t.Fatal(err)
	}
	write("main/inner/b.log", "")
	write("main/inner/c.txt", "")
	write("main/inner/skip.txt", "")
	gittest.Run(t, filepath.Join(main, "inner"), "init", "-q", ".")
	write("main/inner/.git/info/exclude", "skip.txt\n")

	want := []string{"inner/b.log", "inner/c.txt", "kept.txt"}
	if got := files(t, main, Options{}); !slices.Equal(got, want) {
		t.Errorf("from the top: %q, want %q", got, want)
	}
	if got := files(t, filepath.Join(main, "inner"), Options{}); !slices.Equal(got, []string{"b.log", "c.txt"}) {
		t.Errorf("from inside the nested repository: %q", got)
	}
	// git, from inside, agrees (it reads the same global file).
	if out, err := gittest.Output(filepath.Join(main, "inner"), []string{"XDG_CONFIG_HOME=" + global}, "ls-files", "--others", "--exclude-standard"); err != nil || strings.Join(strings.Fields(string(out)), " ") != "b.log c.txt" {
		t.Errorf("git: %q, %v", out, err)
	}

	gittest.Run(t, main, "add", ".gitignore", "kept.txt")
	gittest.Run(t, main, "commit", "-q", "-m", "one")
	wt := filepath.Join(dir, "wt")
	gittest.Run(t, main, "worktree", "add", "-q", wt)
	write("wt/wt-only.txt", "")
	write("wt/new.txt", "")
	if got := files(t, wt, Options{}); !slices.Equal(got, []string{"kept.txt", "new.txt"}) {
		t.Errorf("in a worktree: %q", got)
	}
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// TestSharedStack: the walk's goroutines, sharing one stack of
// directories, visit every entry once, keep out of a directory a visit
// refuses, stop when told, and leave no directory open after.
func TestSharedStack(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	want := map[string]bool{}
	var mk func(rel string, depth int)
	mk = func(rel string, depth int) {
		for i := range 1 + rng.IntN(5) {
			name := fmt.Sprintf("%s/f%d", rel, i)
			want[name[1:]] = true
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if depth == 0 {
			return
		}
		for i := range 2 + rng.IntN(2) {
			name := fmt.Sprintf("%s/d%d", rel, i)
			want[name[1:]] = true
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			mk(name, depth-1)
		}
	}
	mk("", 5)
	// A directory of many files, which the goroutines share.
	for i := range 100 {
		name := fmt.Sprintf("d1/many%d", i)
		want[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(want) < 400 {
		t.Fatalf("a tree of %d entries", len(want))
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := openFDs(t)
	walk := func(ctx context.Context, visit func(Entry) bool) map[string]int {
		var mu sync.Mutex
		seen := map[string]int{}
		Walk(ctx, r, nil, "", Options{NoIgnore: true}, func(e Entry) bool {
			mu.Lock()
			seen[e.Path]++
			mu.Unlock()
			return visit(e)
		})
		if n := openFDs(t); n != before {
			t.Fatalf("%d descriptors open after the walk, %d before", n, before)
		}
		return seen
	}
	seen := walk(context.Background(), func(Entry) bool { return true })
	for p := range want {
		if seen[p] != 1 {
			t.Errorf("%s visited %d times", p, seen[p])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d entries visited, %d there", len(seen), len(want))
	}
	seen = walk(context.Background(), func(e Entry) bool { return e.Path != "d0" })
	for p := range seen {
		if strings.HasPrefix(p, "d0/") {
			t.Fatalf("%s visited in a directory refused", p)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	seen = walk(ctx, func(Entry) bool {
		if n.Add(1) == 50 {
			cancel()
		}
		return true
	})
	if len(seen) >= len(want) {
		t.Errorf("a walk stopped at its 50th entry visited all %d", len(seen))
	}
}

// TestFilesShared: while a goroutine of the walk has nothing to do, the
// files of a directory another is visiting are shared with it, so that a
// directory of many files does not hold up the end of a walk. Here each
// visit waits, up to 50 ms, for two visits to be under way at once, which
// no goroutine alone brings about: a walk that shares nothing takes 50 ms
// a file and fails.
func TestFilesShared(t *testing.T) {
	dir := t.TempDir()
	for i := range 32 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var busy atomic.Int32
	together := make(chan struct{})
	var once sync.Once
	Walk(context.Background(), r, nil, "", Options{}, func(Entry) bool {
		if busy.Add(1) >= 2 {
			once.Do(func() { close(together) })
		}
		select {
		case <-together:
		case <-time.After(50 * time.Millisecond):
		}
		busy.Add(-1)
		return true
	})
	select {
	case <-together:
	default:
		t.Fatal("the files of one directory were visited by one goroutine at a time")
	}
}

// TestSpareP: once a process has walked, the runtime has a P more than a
// walk's goroutines, which is idle while they are all in system calls;
// unless the environment sets GOMAXPROCS, which is the host's to set.
func TestSpareP(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := files(t, dir, Options{}); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("walked %v", got)
	}
	if procs, n := runtime.GOMAXPROCS(0), workers(); n < 2 || procs != n+1 {
		t.Fatalf("GOMAXPROCS %d for %d walkers", procs, n)
	}
}
