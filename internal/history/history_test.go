package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/keep"
	"toolkit/internal/outcome"
)

// settings are the tests' history settings: the baseline in the call.
func settings() Settings {
	s := Defaults
	s.Keeper = false
	return s
}

// newTree is a tree of files, with a state directory of its own.
func newTree(t *testing.T, files map[string]string) string {
	t.Helper()
	return newTreeWith(t, files, settings())
}

// keeping are the settings of a host that keeps a keeper for each tree.
func keeping() Settings {
	s := Defaults
	s.KeeperIdle = time.Minute
	return s
}

// newTreeWith is newTree with the host's settings s; with a keeper, once
// the keeper watches the tree, and a call has walked it whole for it.
func newTreeWith(t testing.TB, files map[string]string, s Settings) string {
	t.Helper()
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The first call makes the index and captures the baseline.
	callWith(t, dir, s, func() {})
	if s.Keeper {
		t.Cleanup(func() { stopKeeper(t, dir) })
		waitKeeper(t, dir, s)
		callWith(t, dir, s, func() {})
	}
	return dir
}

// waitKeeper waits until dir's keeper watches it, its baseline kept.
func waitKeeper(t testing.TB, dir string, s Settings) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, k := range Keepers() {
			if k.Tree == dir && k.State == "watching" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no keeper watches %s after 20 s: %+v", dir, Keepers())
		}
		// A call, as a host makes them: the keeper captures once the
		// index is there, when a call asks.
		callWith(t, dir, s, func() {})
		time.Sleep(10 * time.Millisecond)
	}
}

// stopKeeper stops dir's keepers (one that lost the race to be the tree's
// keeper may still be on its way to learn it), and waits for them to end.
func stopKeeper(t testing.TB, dir string) {
	for range 500 {
		var left []int
		names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, name := range names {
			b, err := os.ReadFile(name)
			if args := strings.Split(string(b), "\x00"); err == nil && len(args) > 3 && args[1] == KeeperName && args[2] == dir {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(name)))
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the keepers of %s did not end", dir)
}

// wholeAt is when dir was last walked whole for its keeper.
func wholeAt(t *testing.T, dir string) time.Time {
	h, err := open(settings())
	must(t, err)
	defer h.close()
	return h.readWatchPoint(dir).Whole
}

// call runs change as a scanned call on dir and returns what it changed.
func call(t *testing.T, dir string, change func()) *outcome.Changes {
	t.Helper()
	return callWith(t, dir, settings(), change)
}

// callWith is call with the host's settings s.
func callWith(t testing.TB, dir string, s Settings, change func()) *outcome.Changes {
	t.Helper()
	c, err := Begin(context.Background(), "shell", dir, true, s)
	if err != nil {
		t.Fatal(err)
	}
	change()
	ch, err := c.End(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// said is what a call's changes list: "M a.txt", one per file, in order.
func said(ch *outcome.Changes) []string {
	var out []string
	for _, f := range ch.Files {
		out = append(out, f.Status+" "+f.Path)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMutations: every kind of change a command makes is found (the
// corpus of the issue: same-size rewrites in one clock tick, restored
// times, renames over a file, hard links, chmod, links retargeted, delete
// and recreate, mmap writes, truncation, a file become a directory and
// back, odd names), and nothing else is said; FIFOs and devices are never
// opened.
//
// With a keeper the same, each call walking only what the keeper saw
// change. (A write through mmap is not an inotify event, but the close of
// a file opened to write it is.)
func TestMutations(t *testing.T) {
	t.Run("scan", func(t *testing.T) { mutations(t, settings()) })
	t.Run("keeper", func(t *testing.T) {
		mutations(t, keeping())
	})
}

func mutations(t *testing.T, s Settings) {
	at := func(dir, name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		name   string
		files  map[string]string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{"same size, same tick", map[string]string{"a": "1111"}, func(t *testing.T, dir string) {
			fi, _ := os.Stat(at(dir, "a"))
			must(t, os.WriteFile(at(dir, "a"), []byte("2222"), 0o644))
			must(t, os.Chtimes(at(dir, "a"), fi.ModTime(), fi.ModTime()))
		}, []string{"M a"}},
		{"touch -r restores the time", map[string]string{"a": "one\n", "ref": "x"}, func(t *testing.T, dir string) {
			fi, _ := os.Stat(at(dir, "ref"))
			must(t, os.WriteFile(at(dir, "a"), []byte("two\n"), 0o644))
			must(t, os.Chtimes(at(dir, "a"), fi.ModTime(), fi.ModTime()))
		}, []string{"M a"}},
		{"rename over", map[string]string{"a": "old", "b": "new"}, func(t *testing.T, dir string) {
			must(t, os.Rename(at(dir, "b"), at(dir, "a")))
		}, []string{"M a", "D b"}},
		{"hard link", map[string]string{"a": "x"}, func(t *testing.T, dir string) {
			must(t, os.Link(at(dir, "a"), at(dir, "b")))
		}, []string{"A b"}},
		{"chmod only", map[string]string{"run.sh": "echo\n"}, func(t *testing.T, dir string) {
			must(t, os.Chmod(at(dir, "run.sh"), 0o755))
		}, []string{"M run.sh"}},
		{"touch only", map[string]string{"a": "x"}, func(t *testing.T, dir string) {
			now := time.Now().Add(time.Hour)
			must(t, os.Chtimes(at(dir, "a"), now, now))
		}, nil},
		{"link retargeted", map[string]string{"t1": "1", "t2": "2"}, func(t *testing.T, dir string) {
			must(t, os.Symlink("t1", at(dir, "l")))
		}, []string{"A l"}},
		{"delete and recreate, same size", map[string]string{"a": "abc"}, func(t *testing.T, dir string) {
			must(t, os.Remove(at(dir, "a")))
			must(t, os.WriteFile(at(dir, "a"), []byte("xyz"), 0o644))
		}, []string{"M a"}},
		{"mmap write", map[string]string{"a": "aaaa"}, func(t *testing.T, dir string) {
			f, err := os.OpenFile(at(dir, "a"), os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			m, err := unix.Mmap(int(f.Fd()), 0, 4, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			must(t, err)
			m[0] = 'b'
			must(t, unix.Msync(m, unix.MS_SYNC))
			must(t, unix.Munmap(m))
		}, []string{"M a"}},
		{"truncate", map[string]string{"a": "some text\n"}, func(t *testing.T, dir string) {
			must(t, os.Truncate(at(dir, "a"), 0))
		}, []string{"M a"}},
		{"a file become a directory", map[string]string{"a": "x"}, func(t *testing.T, dir string) {
			must(t, os.Remove(at(dir, "a")))
			must(t, os.MkdirAll(at(dir, "a/b"), 0o755))
			must(t, os.WriteFile(at(dir, "a/b/c"), []byte("y"), 0o644))
		}, []string{"D a", "A a/b/c"}},
		{"odd names", map[string]string{}, func(t *testing.T, dir string) {
			must(t, os.WriteFile(at(dir, "new\nline"), []byte("x"), 0o644))
			must(t, os.WriteFile(at(dir, "bad\xff"), []byte("x"), 0o644))
		}, []string{"A bad\xff", "A new\nline"}},
		{"a FIFO is not opened", map[string]string{"a": "x"}, func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(at(dir, "fifo"), 0o644))
		}, nil},
		{"ignored: small kept, .git never", map[string]string{".gitignore": "*.log\n.env\n", "a": "x"}, func(t *testing.T, dir string) {
			must(t, os.WriteFile(at(dir, ".env"), []byte("SECRET=1\n"), 0o644))
			must(t, os.WriteFile(at(dir, "big.log"), make([]byte, maxIgnored+1), 0o644))
			must(t, os.MkdirAll(at(dir, ".git"), 0o755))
			must(t, os.WriteFile(at(dir, ".git/HEAD"), []byte("x"), 0o644))
		}, []string{"A .env"}},
		{"a heavy directory is one entry", map[string]string{"node_modules/x/a.js": "1"}, func(t *testing.T, dir string) {
			must(t, os.MkdirAll(at(dir, "node_modules/y"), 0o755))
			must(t, os.WriteFile(at(dir, "node_modules/y/b.js"), []byte("2"), 0o644))
		}, []string{"M node_modules/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newTreeWith(t, tc.files, s)
			whole := wholeAt(t, dir)
			ch := callWith(t, dir, s, func() { tc.change(t, dir) })
			if got := said(ch); !slices.Equal(got, tc.want) {
				t.Fatalf("said %q, want %q", got, tc.want)
			}
			// And a call that changes nothing after it says nothing.
			if again := callWith(t, dir, s, func() {}); len(again.Files) > 0 || again.Outside != nil {
				t.Fatalf("the next call said %q", said(again))
			}
			if s.Keeper && !wholeAt(t, dir).Equal(whole) {
				t.Errorf("the calls walked the whole tree, not what the keeper saw change")
			}
		})
	}
}

// TestRacyRewrite: a same-size rewrite in the tick of the scan that saw
// the file, with its time put back, is found by the next scan: the entry
// was racy, and is hashed again.
func TestRacyRewrite(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "1111"})
	p := filepath.Join(dir, "a")
	var stamp time.Time
	ch := call(t, dir, func() {
		must(t, os.WriteFile(p, []byte("2222"), 0o644))
		fi, _ := os.Stat(p)
		stamp = fi.ModTime()
	})
	if got := said(ch); !slices.Equal(got, []string{"M a"}) {
		t.Fatalf("said %q", got)
	}
	// The scan just now saw it within racyWindow of its time: racy.
	ch = call(t, dir, func() {
		must(t, os.WriteFile(p, []byte("3333"), 0o644))
		must(t, os.Chtimes(p, stamp, stamp))
	})
	if got := said(ch); !slices.Equal(got, []string{"M a"}) {
		t.Fatalf("a racy rewrite: said %q", got)
	}
}

// TestOutsideAndLines: a change between calls is found before the next
// call and said apart; lines added and removed are counted; the line
// names the call.
func TestOutsideAndLines(t *testing.T) {
	dir := newTree(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	must(t, os.WriteFile(filepath.Join(dir, "readme"), []byte("hi\n"), 0o644))
	ch := call(t, dir, func() {
		must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\nTWO\nthree\nfour\n"), 0o644))
	})
	if ch.Outside == nil || len(ch.Outside.Files) != 1 || ch.Outside.Files[0].Path != "readme" {
		t.Fatalf("outside: %+v", ch.Outside)
	}
	lines := Lines(ch, false)
	want := []string{
		fmt.Sprintf("[changed outside calls since call %d: A readme (+1)]", ch.Call-1),
		fmt.Sprintf("[changed: 1 file — M a.txt (+2 -1) · call %d]", ch.Call),
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("lines %q, want %q", lines, want)
	}
	// The jobs that ran in the tree meanwhile are named, at most three.
	for jobs, want := range map[string]string{
		"3f2a":      ", while job 3f2a ran: A readme (+1)]",
		"a b":       ", while jobs a, b ran: A readme (+1)]",
		"a b c d e": ", while jobs a, b, c and 2 more ran: A readme (+1)]",
	} {
		ch.Outside.Jobs = strings.Fields(jobs)
		if got := Lines(ch, false)[0]; !strings.HasSuffix(got, want) {
			t.Errorf("jobs %q: %q, want it to end %q", jobs, got, want)
		}
	}
}

// TestUndo: a call taken back restores what it changed, refuses what
// changed since (unless forced), and is a call of its own: undoing it is
// a redo.
func TestUndo(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "one\n", "b": "keep\n", "sub/c": "c\n"})
	ctx := context.Background()
	p := func(name string) string { return filepath.Join(dir, name) }
	read := func(name string) string {
		b, err := os.ReadFile(p(name))
		if err != nil {
			return "<none>"
		}
		return string(b)
	}
	ch := call(t, dir, func() {
		must(t, os.WriteFile(p("a"), []byte("two\n"), 0o644))
		must(t, os.Remove(p("b")))
		must(t, os.MkdirAll(p("new/deep"), 0o755))
		must(t, os.WriteFile(p("new/deep/d"), []byte("d\n"), 0o600))
		must(t, os.Chmod(p("sub/c"), 0o700))
	})
	n := ch.Call
	res, _, err := UndoCalls(ctx, UndoArgs{Call: n, DryRun: true}, settings())
	if err != nil || files(res.Restored) != 4 || read("a") != "two\n" {
		t.Fatalf("dry run: %+v %v; a is %q", res, err, read("a"))
	}
	res, uch, err := UndoCalls(ctx, UndoArgs{Call: n}, settings())
	if err != nil || len(res.Conflicts) > 0 {
		t.Fatalf("undo: %+v %v", res, err)
	}
	fi, _ := os.Stat(p("sub/c"))
	if read("a") != "one\n" || read("b") != "keep\n" || read("new/deep/d") != "<none>" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("after the undo: a %q, b %q, d %q, c %v", read("a"), read("b"), read("new/deep/d"), fi.Mode())
	}
	if _, err := os.Stat(p("new")); err == nil {
		t.Fatal("the directories the call made are still there")
	}
	// The undo is a call: undone, it is a redo.
	if _, _, err := UndoCalls(ctx, UndoArgs{Call: uch.Call}, settings()); err != nil {
		t.Fatal(err)
	}
	if read("a") != "two\n" || read("b") != "<none>" {
		t.Fatalf("after the redo: a %q, b %q", read("a"), read("b"))
	}
	// A change since is a conflict, left as it is; force restores it.
	must(t, os.WriteFile(p("a"), []byte("mine\n"), 0o644))
	res, _, err = UndoCalls(ctx, UndoArgs{Call: n}, settings())
	if err != nil || len(res.Conflicts) != 1 || read("a") != "mine\n" {
		t.Fatalf("conflict: %+v %v; a %q", res, err, read("a"))
	}
	if !strings.Contains(res.Text(), "1 conflict: a changed since") {
		t.Errorf("said %q", res.Text())
	}
	if _, _, err = UndoCalls(ctx, UndoArgs{Call: n, Force: true}, settings()); err != nil || read("a") != "one\n" {
		t.Fatalf("force: %v; a %q", err, read("a"))
	}
}

// files counts the steps of files, not directories.
func files(steps []UndoStep) int {
	n := 0
	for _, st := range steps {
		if !st.Dir {
			n++
		}
	}
	return n
}

// TestNoLongerKept: once the store's cap has pushed out a call's contents
// (its oldest packs removed), the call is still listed with what it
// changed, marked no longer undoable, and undo says so instead of calling
// the store corrupt.
func TestNoLongerKept(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "one\n"})
	ch := call(t, dir, func() { must(t, os.WriteFile(filepath.Join(dir, "a"), []byte("two\n"), 0o644)) })
	if !ch.Files[0].Restorable {
		t.Fatalf("before the trim: %+v", ch.Files)
	}
	packs, _ := filepath.Glob(filepath.Join(os.Getenv("TOOLKIT_STATE"), "history", "packs", "*"))
	if len(packs) == 0 {
		t.Fatal("no pack")
	}
	for _, p := range packs {
		must(t, os.Remove(p)) // as trim does
	}
	ci, _, err := Show(ch.Call, false)
	if err != nil || len(ci.Files) != 1 || ci.Files[0].Restorable || ci.Files[0].Why != noLongerKept {
		t.Fatalf("shown: %+v %v", ci.Files, err)
	}
	res, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, settings())
	if err != nil || len(res.NotKept) != 1 || res.NotKept[0].Why != noLongerKept {
		t.Fatalf("undo: %+v %v", res, err)
	}
}

// TestLogBounded: past log.MaxLog the log of calls keeps only its newest
// calls, within half of it: the others are no longer listed nor undoable,
// and the newest still are.
func TestLogBounded(t *testing.T) {
	was := log.MaxLog
	log.MaxLog = 4096
	t.Cleanup(func() { log.MaxLog = was })
	dir := newTree(t, map[string]string{"a": "0\n"})
	var last *outcome.Changes
	var first int64
	for i := range 40 {
		last = call(t, dir, func() { must(t, os.WriteFile(filepath.Join(dir, "a"), fmt.Appendf(nil, "%d\n", i+1), 0o644)) })
		if i == 0 {
			first = last.Call
		}
	}
	fi, err := os.Stat(filepath.Join(os.Getenv("TOOLKIT_STATE"), "history", "calls.jsonl"))
	if err != nil || fi.Size() > log.MaxLog {
		t.Fatalf("the log: %v, %v bytes over %d", err, fi.Size(), log.MaxLog)
	}
	if _, _, err := Show(first, false); err == nil {
		t.Errorf("call %d is still in the log", first)
	}
	calls, total, err := List(false, 0, 100)
	if err != nil || total < 5 || calls[0].Call != last.Call {
		t.Fatalf("listed %d calls, newest %+v: %v", total, calls[0], err)
	}
	if _, _, err := UndoCalls(context.Background(), UndoArgs{Call: last.Call}, settings()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "39\n" {
		t.Fatalf("after the undo of the newest call: %q", b)
	}
}

// TestUndoTo: to: N takes the tree back to before call N, through every
// later call, the later first.
func TestUndoTo(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "0\n"})
	p := filepath.Join(dir, "a")
	first := call(t, dir, func() { must(t, os.WriteFile(p, []byte("1\n"), 0o644)) })
	call(t, dir, func() { must(t, os.WriteFile(p, []byte("2\n"), 0o644)) })
	call(t, dir, func() { must(t, os.WriteFile(filepath.Join(dir, "b"), []byte("b\n"), 0o644)) })
	res, _, err := UndoCalls(context.Background(), UndoArgs{To: first.Call}, settings())
	if err != nil || len(res.Calls) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "0\n" {
		t.Fatalf("a is %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Fatal("b is still there")
	}
}

// TestSaid: write, edit and patch say what they wrote, with its bytes: no
// scan, and the next scan does not find it again. The directories a call
// made on the way to a file are its, however long it took before history
// was told: they were born after the call began.
func TestSaid(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "one\n"})
	p := filepath.Join(dir, "a")
	began := time.Now()
	must(t, os.WriteFile(p, []byte("two\n"), 0o644))
	ch, err := Said(context.Background(), "write", dir, settings(), began, []outcome.Wrote{{Path: p, Before: []byte("one\n"), Existed: true, After: []byte("two\n"), Exists: true}})
	must(t, err)
	if got := said(ch); !slices.Equal(got, []string{"M a"}) || !ch.Files[0].Restorable {
		t.Fatalf("said %+v", ch.Files)
	}
	if again := call(t, dir, func() {}); len(again.Files) > 0 || again.Outside != nil {
		t.Fatalf("the next scan found %q", said(again))
	}
	if _, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, settings()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Fatalf("a is %q", b)
	}

	began = time.Now()
	q := filepath.Join(dir, "n1/n2/b")
	must(t, os.MkdirAll(filepath.Dir(q), 0o755))
	must(t, os.WriteFile(q, []byte("b\n"), 0o644))
	time.Sleep(3 * racyWindow) // a patch of many files, say
	ch, err = Said(context.Background(), "patch", dir, settings(), began, []outcome.Wrote{{Path: q, After: []byte("b\n"), Exists: true}})
	must(t, err)
	if got := said(ch); !slices.Equal(got, []string{"A n1/n2/b"}) {
		t.Fatalf("said %q", got)
	}
	if _, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, settings()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "n1")); err == nil {
		t.Fatal("the directories the call made are there after its undo")
	}
}

// TestTree: the tree is the root, else the top of the git work tree, else
// the directory; never / or the temporary directory itself.
func TestTree(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "repo/.git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "repo/src/x"), 0o755))
	for _, tc := range []struct{ dir, root, want string }{
		{filepath.Join(dir, "repo/src/x"), "", filepath.Join(dir, "repo")},
		{filepath.Join(dir, "repo/src/x"), filepath.Join(dir, "repo/src"), filepath.Join(dir, "repo/src")},
		{dir, "", dir},
		{"/", "", ""},
		{os.TempDir(), "", ""},
	} {
		if got, _ := Tree(tc.dir, tc.root); got != tc.want {
			t.Errorf("Tree(%q, %q) = %q, want %q", tc.dir, tc.root, got, tc.want)
		}
	}
}

// TestBigDir: a directory that gains BigDir files or more in one call is
// one entry, its files and bytes counted, none of them kept; a smaller one
// is said file by file. 50,000 files in 500 directories (3,000 under
// -short) in one call.
func TestBigDir(t *testing.T) {
	files, per := 50_000, 100
	if testing.Short() {
		files = 3_000
	}
	dir := newTree(t, map[string]string{"a.txt": "a\n"})
	ch := call(t, dir, func() {
		for i := range files {
			p := filepath.Join(dir, "build", fmt.Sprintf("d%03d", i/per), fmt.Sprintf("f%d.o", i))
			if i%per == 0 {
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			}
			must(t, os.WriteFile(p, []byte("xy"), 0o644))
		}
		must(t, os.MkdirAll(filepath.Join(dir, "small"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "small", "s.txt"), []byte("s\n"), 0o644))
	})
	if got, want := said(ch), []string{"A build/", "A small/s.txt"}; !slices.Equal(got, want) {
		t.Fatalf("said %q, want %q", got, want)
	}
	b := ch.Files[0]
	if why := fmt.Sprintf("a directory of %d new files is not kept", files); b.Why != why || b.Bytes != int64(2*files) || b.Restorable {
		t.Errorf("build/: %q, %d bytes, restorable %v; want %q, %d bytes, not restorable", b.Why, b.Bytes, b.Restorable, why, 2*files)
	}
}

// TestWholeWalk: what no inotify event says, a file of the tree changed
// through a hard link outside it, is found by the next call that walks the
// whole tree (one a minute), as a change made outside the calls.
func TestWholeWalk(t *testing.T) {
	s := keeping()
	dir := newTreeWith(t, map[string]string{"a": "one\n"}, s)
	outside := filepath.Join(t.TempDir(), "a")
	must(t, os.Link(filepath.Join(dir, "a"), outside))
	callWith(t, dir, s, func() {})
	ch := callWith(t, dir, s, func() { must(t, os.WriteFile(outside, []byte("two\n"), 0o644)) })
	if len(ch.Files) > 0 || ch.Outside != nil {
		t.Fatalf("said %q: the keeper saw it", said(ch))
	}
	was := wholeEvery
	wholeEvery = 0
	t.Cleanup(func() { wholeEvery = was })
	ch = callWith(t, dir, s, func() {})
	if ch.Outside == nil || len(ch.Outside.Files) != 1 || ch.Outside.Files[0].Path != "a" || ch.Outside.Files[0].Status != "M" {
		t.Fatalf("the whole walk found %+v", ch.Outside)
	}
}

// TestGitFIFO: a FIFO put in place of .git/HEAD is never waited on: the
// call ends, with no HEAD said.
func TestGitFIFO(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "x"})
	must(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(dir, ".git", "HEAD"), 0o644))
	done := make(chan *outcome.Changes, 1)
	go func() { done <- call(t, dir, func() {}) }()
	select {
	case ch := <-done:
		if ch.Git != "" {
			t.Errorf("git: %q", ch.Git)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call waited on the FIFO")
	}
}

// TestKeeperFollows: with a keeper, each call walks only what it saw
// change, and finds what a walk of the whole tree would: a directory tree
// made, moved, removed; a directory an ignore file stops leaving out; a
// file in a heavy directory.
func TestKeeperFollows(t *testing.T) {
	s := keeping()
	dir := newTreeWith(t, map[string]string{"a.txt": "a\n", ".gitignore": "build/\n"}, s)
	at := func(p string) string { return filepath.Join(dir, p) }
	whole := wholeAt(t, dir)
	for _, step := range []struct {
		name   string
		change func()
		want   []string
	}{
		{"a tree made", func() {
			must(t, os.MkdirAll(at("x/y/z"), 0o755))
			must(t, os.WriteFile(at("x/y/z/f.txt"), []byte("f\n"), 0o644))
			must(t, os.WriteFile(at("x/g.txt"), []byte("g\n"), 0o644))
		}, []string{"A x/"}},
		{"written in the new tree", func() {
			must(t, os.WriteFile(at("x/y/z/f.txt"), []byte("f2\n"), 0o644))
		}, []string{"M x/y/z/f.txt"}},
		{"the tree moved", func() { must(t, os.Rename(at("x"), at("w"))) },
			[]string{"A w/", "D x/"}},
		{"written where it went", func() {
			must(t, os.WriteFile(at("w/y/z/f.txt"), []byte("f3\n"), 0o644))
		}, []string{"M w/y/z/f.txt"}},
		{"the tree removed", func() { must(t, os.RemoveAll(at("w"))) },
			[]string{"D w/"}},
		{"an ignored directory written", func() {
			must(t, os.MkdirAll(at("build/obj"), 0o755))
			must(t, os.WriteFile(at("build/obj/o.bin"), make([]byte, maxIgnored+1), 0o644))
		}, nil},
		{"no longer ignored", func() { must(t, os.WriteFile(at(".gitignore"), []byte("*.tmp\n"), 0o644)) },
			[]string{"M .gitignore", "A build/obj/o.bin"}},
		{"written in it", func() {
			must(t, os.WriteFile(at("build/obj/o.bin"), []byte("small\n"), 0o644))
		}, []string{"M build/obj/o.bin"}},
		{"a heavy directory", func() {
			must(t, os.MkdirAll(at("node_modules/p"), 0o755))
		}, []string{"A node_modules/"}},
		{"a package installed in it", func() {
			must(t, os.MkdirAll(at("node_modules/q"), 0o755))
		}, []string{"M node_modules/"}},
	} {
		ch := callWith(t, dir, s, step.change)
		if got := said(ch); !slices.Equal(got, step.want) {
			t.Fatalf("%s: said %q, want %q", step.name, got, step.want)
		}
	}
	if !wholeAt(t, dir).Equal(whole) {
		t.Errorf("a call walked the whole tree")
	}
}

// TestKeeperOverflow: events the kernel could not queue (its keeper
// stopped while 20,000 files were made) make the next call walk the whole
// tree, and find them all.
func TestKeeperOverflow(t *testing.T) {
	s := keeping()
	dir := newTreeWith(t, map[string]string{"many/a.txt": "a\n"}, s)
	pid := keeperPid(t, dir)
	must(t, syscall.Kill(pid, syscall.SIGSTOP))
	for i := range 20_000 {
		must(t, os.WriteFile(filepath.Join(dir, "many", fmt.Sprint(i)), nil, 0o644))
	}
	must(t, syscall.Kill(pid, syscall.SIGCONT))
	whole := wholeAt(t, dir)
	ch := callWith(t, dir, s, func() {})
	if ch.Outside == nil || len(ch.Outside.Files) != 20_000 {
		t.Fatalf("found %+v", ch.Outside)
	}
	if wholeAt(t, dir).Equal(whole) {
		t.Errorf("the tree was not walked whole")
	}
}

// keeperPid is the pid of dir's keeper.
func keeperPid(t *testing.T, dir string) int {
	for _, k := range Keepers() {
		if k.Tree == dir {
			return k.Pid
		}
	}
	t.Fatalf("no keeper for %s", dir)
	return 0
}

// TestKeeperTooMany: a tree of more directories than the keeper may watch
// is not watched: the keeper captures its baseline and ends, is not
// started again, and each call walks the whole tree.
func TestKeeperTooMany(t *testing.T) {
	s := keeping()
	s.MaxWatches = 3
	dir := newTreeWith(t, map[string]string{"a/1": "1", "b/2": "2", "c/3": "3", "d/4": "4"}, settings())
	callWith(t, dir, s, func() {})
	t.Cleanup(func() { stopKeeper(t, dir) })
	h, err := open(s)
	must(t, err)
	name := h.keeperFile(dir)
	h.close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(name + ".unwatched"); err == nil && !keep.Held(name) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper did not give up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ch := callWith(t, dir, s, func() { must(t, os.WriteFile(filepath.Join(dir, "d/4"), []byte("four"), 0o644)) })
	if got := said(ch); !slices.Equal(got, []string{"M d/4"}) {
		t.Fatalf("said %q", got)
	}
	if len(Keepers()) != 0 {
		t.Errorf("a keeper was started again: %+v", Keepers())
	}
}

// TestLockWait: a toolkit that holds history's lock and never lets go (one
// stopped by SIGSTOP) holds a call up for lockWait at most: the call goes
// on without history, saying why.
func TestLockWait(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "x"})
	h, err := open(settings())
	must(t, err)
	defer h.close()
	was := lockWait
	lockWait = 100 * time.Millisecond
	t.Cleanup(func() { lockWait = was })
	began := time.Now()
	_, err = Begin(context.Background(), "shell", dir, true, settings())
	if err == nil || !strings.Contains(err.Error(), "another toolkit has held its lock for 0.1 s") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("held up %v", d)
	}
}

// TestLogRead: the log's lines are read with their file lists left in
// them, and a call's lists decoded when asked for: what was written (names
// that are not UTF-8 byte for byte), an empty list as none, a torn last
// line left out.
func TestLogRead(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	h, err := open(settings())
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	at := time.Unix(1e9, 0).UTC()
	files := []log.File{{Path: "a\nb.go", Status: "M", Pre: strings.Repeat("a", 64), Post: strings.Repeat("b", 64)}, {Path: "new\xff\xfe", Status: "A"}}
	outside := []log.File{{Path: "hand\xff.txt", Status: "A"}}
	for _, r := range []log.Record{
		{Call: 1, Tree: "/t\xff", Tool: "shell", Begin: &at},
		{Call: 1, End: &at, Files: files, Outside: outside, Since: 0},
		{Call: 2, Tree: "/t", Tool: "shell", Begin: &at},
		{Call: 2, End: &at, Files: []log.File{}},
		{Call: 3, Tree: "/t", Tool: "undo", Begin: &at},
		{Call: 3, End: &at, Undid: []int64{1}},
	} {
		if err := log.Append(h.dir, r); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(h.dir, "calls.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"call":4,"end":"2001-09-09T01:46:40Z","files":[{"path":"torn`)
	f.Close()
	byN, order, err := h.calls()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int64{1, 2, 3}) {
		t.Fatalf("calls %v", order)
	}
	c1, c2, c3 := byN[1], byN[2], byN[3]
	// Names that are not UTF-8 come back as they were, not with U+FFFD.
	if c1.tree != "/t\xff" {
		t.Fatalf("tree %q", c1.tree)
	}
	if !reflect.DeepEqual(c1.files(), files) || !reflect.DeepEqual(c1.outside(), outside) || !c1.changedAny() {
		t.Fatalf("call 1: files %+v, outside %+v", c1.files(), c1.outside())
	}
	if len(c2.files()) != 0 || c2.outside() != nil || c2.changedAny() {
		t.Fatalf("call 2 said changes: %+v", c2.files())
	}
	if !c3.changedAny() || len(c3.files()) != 0 || !slices.Equal(c3.undid, []int64{1}) {
		t.Fatalf("call 3: %+v", c3)
	}
}

// TestHashedNotKept: a file whose content history does not keep (with
// --history report, or larger than --history-max-file) is hashed all the
// same, so that a touch, or a file made in the clock tick before the first
// call, is no change: they were said modified, their content unknown.
func TestHashedNotKept(t *testing.T) {
	report := settings()
	report.Mode = Report
	small := settings()
	small.MaxFile = 4
	keeper := keeping()
	keeper.Mode = Report
	for name, s := range map[string]Settings{"report": report, "too large to keep": small, "report, with a keeper": keeper} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("some text\n"), 0o644))
			// Made just now: racy for the first call's scans, hashed by its
			// first (the keeper's baseline comes later).
			if ch := callWith(t, dir, s, func() {}); len(ch.Files) > 0 {
				t.Fatalf("the first call said %q", said(ch))
			}
			if s.Keeper {
				t.Cleanup(func() { stopKeeper(t, dir) })
				waitKeeper(t, dir, s)
			}
			later := time.Now().Add(time.Hour)
			if ch := callWith(t, dir, s, func() { must(t, os.Chtimes(filepath.Join(dir, "a.txt"), later, later)) }); len(ch.Files) > 0 {
				t.Fatalf("a touch said %q", said(ch))
			}
			ch := callWith(t, dir, s, func() { must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("other text\n"), 0o644)) })
			if got := said(ch); !slices.Equal(got, []string{"M a.txt"}) || ch.Files[0].Restorable {
				t.Fatalf("a rewrite said %q", got)
			}
		})
	}
}

// TestDuring: two calls on one tree at once (parallel MCP calls): what
// the scans find goes to the call that ended first, said to have run
// during the other; the other says nothing of it again.
func TestDuring(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "1\n"})
	ctx := context.Background()
	first, err := Begin(ctx, "shell", dir, true, settings())
	must(t, err)
	second, err := Begin(ctx, "shell", dir, true, settings())
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "a"), []byte("2\n"), 0o644))
	ch, err := second.End(ctx, nil)
	must(t, err)
	if got := said(ch); !slices.Equal(got, []string{"M a"}) || !slices.Equal(ch.During, []int64{first.N}) {
		t.Fatalf("the second said %q, during %v", got, ch.During)
	}
	if l := Lines(ch, false); len(l) != 1 || !strings.HasSuffix(l[0], fmt.Sprintf(" · call %d, during call %d]", second.N, first.N)) {
		t.Fatalf("lines %q", l)
	}
	// The first ran meanwhile: the change is said by it too, during the
	// second.
	ch, err = first.End(ctx, nil)
	must(t, err)
	if got := said(ch); !slices.Equal(got, []string{"M a"}) || ch.Outside != nil || !slices.Equal(ch.During, []int64{second.N}) {
		t.Fatalf("the first said %q, outside %+v, during %v", said(ch), ch.Outside, ch.During)
	}
}

// TestWritingWhileScanned: a file a command still writes while the scan
// after it reads it is said changed, with no content that is not what the
// file held, and the next scan looks at it again (index.Racy): nothing is lost
// and nothing said that did not happen.
func TestWritingWhileScanned(t *testing.T) {
	dir := newTree(t, map[string]string{"a": "start\n"})
	p := filepath.Join(dir, "a")
	stop := make(chan struct{})
	done := make(chan struct{})
	ch := call(t, dir, func() {
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 1+i%50)), 0o644)
			}
		}()
		time.Sleep(20 * time.Millisecond)
	})
	close(stop)
	<-done
	if got := said(ch); len(got) > 1 || len(got) == 1 && got[0] != "M a" {
		t.Fatalf("said %q", got)
	}
	final, err := os.ReadFile(p)
	must(t, err)
	// Once the writing stopped, the next call finds the file as it is (a
	// change outside the calls: the writing went on after the call), or
	// nothing; the call after it nothing.
	next := call(t, dir, func() {})
	if len(next.Files) > 0 {
		t.Fatalf("the next call said %q", said(next))
	}
	again := call(t, dir, func() {})
	if len(again.Files) > 0 || again.Outside != nil {
		t.Fatalf("a call after it said %q", said(again))
	}
	// The last record of a, the calls' or outside them, names what it
	// holds now: a content read mid-write (empty, after the truncation) is
	// one it held, and the next scan looked at it again.
	h, err := open(settings())
	must(t, err)
	defer h.close()
	byN, order, err := h.calls()
	must(t, err)
	want := fmt.Sprintf("%x", hashOf(final))
	for _, n := range slices.Backward(order) {
		for _, f := range slices.Concat(byN[n].files(), byN[n].outside()) { // its own changes came after
			if f.Path == "a" && f.Post != "" {
				if f.Post != want {
					t.Fatalf("call %d says a holds %s, it holds %s", n, f.Post, want)
				}
				return
			}
		}
	}
	t.Fatal("no record names a")
}

// TestCaptureBatch: a background capture stops a batch once it has read
// its bytes (the lock is held meanwhile), and the next batch goes on from
// there; with --history report it hashes what it does not keep.
func TestCaptureBatch(t *testing.T) {
	t.Setenv("TOOLKIT_STATE", filepath.Join(t.TempDir(), "state"))
	dir := t.TempDir()
	for i := range 4 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte(strings.Repeat("x", 100)), 0o644))
	}
	s := settings()
	s.Mode = Report
	h, err := open(s)
	must(t, err)
	defer h.close()
	seen, err := walkTree(context.Background(), dir, "", nil)
	must(t, err)
	idx := &index.Index{}
	for _, e := range seen {
		idx.Entries = append(idx.Entries, e.Entry)
	}
	if n := h.capture(context.Background(), dir, idx, 500, 150); n != 2 {
		t.Fatalf("a batch of 150 bytes marked %d files of 100", n)
	}
	if n := h.capture(context.Background(), dir, idx, 500, 1000); n != 2 {
		t.Fatalf("the next batch marked %d", n)
	}
	want := hashOf([]byte(strings.Repeat("x", 100)))
	for _, e := range idx.Entries {
		if e.Sum != want || e.Flags&index.Stored != 0 {
			t.Fatalf("%s: %x, flags %b", e.Path, e.Sum, e.Flags)
		}
	}
}

// TestUndoExact: a call that rewrites, adds and removes files, retargets
// links and changes what kind of thing a path is (a file, a directory
// holding a file, a link to a directory of the tree, nothing) is taken
// back exactly: the tree is byte for byte, kind for kind and mode for mode
// what it was before the call, nothing outside the call's paths changed
// (the directory a link reached included); undoing the undo is the tree
// after the call; to over two calls is the tree before the first.
func TestUndoExact(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	for seed := range uint64(rounds) {
		dir := newTree(t, nil)
		mutate(dir, 1000+seed)
		call(t, dir, func() {})
		before := snapshot(t, dir)
		ch := call(t, dir, func() { mutate(dir, 2000+seed) })
		afterCall := snapshot(t, dir)
		ch2 := call(t, dir, func() { mutate(dir, 3000+seed) })
		res, _, err := UndoCalls(context.Background(), UndoArgs{Call: ch2.Call}, settings())
		if err != nil || len(res.Conflicts)+len(res.NotKept)+len(res.Left) > 0 {
			t.Fatalf("seed %d: undo of call %d: %v %+v", seed, ch2.Call, err, res)
		}
		if got := snapshot(t, dir); !reflect.DeepEqual(got, afterCall) {
			t.Fatalf("seed %d: after the undo of the last call:\n%s", seed, snapDiff(afterCall, got))
		}
		res, uch, err := UndoCalls(context.Background(), UndoArgs{Call: ch.Call}, settings())
		if err != nil || len(res.Conflicts)+len(res.NotKept)+len(res.Left) > 0 {
			t.Fatalf("seed %d: undo of call %d: %v %+v", seed, ch.Call, err, res)
		}
		if got := snapshot(t, dir); !reflect.DeepEqual(got, before) {
			t.Fatalf("seed %d: after the undo:\n%s", seed, snapDiff(before, got))
		}
		if _, _, err := UndoCalls(context.Background(), UndoArgs{Call: uch.Call}, settings()); err != nil {
			t.Fatal(err)
		}
		if got := snapshot(t, dir); !reflect.DeepEqual(got, afterCall) {
			t.Fatalf("seed %d: after the redo:\n%s", seed, snapDiff(afterCall, got))
		}
		if _, _, err := UndoCalls(context.Background(), UndoArgs{To: ch.Call}, settings()); err != nil {
			t.Fatal(err)
		}
		if got := snapshot(t, dir); !reflect.DeepEqual(got, before) {
			t.Fatalf("seed %d: after to %d:\n%s", seed, ch.Call, snapDiff(before, got))
		}
		if again := call(t, dir, func() {}); len(again.Files) > 0 || again.Outside != nil {
			t.Fatalf("seed %d: the next call said %q, outside %+v", seed, said(again), again.Outside)
		}
	}
}

// snapDiff says how two snapshots differ.
func snapDiff(want, got map[string]string) string {
	var b strings.Builder
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			fmt.Fprintf(&b, "  %s: want %q, got %q\n", p, w, g)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			fmt.Fprintf(&b, "  %s: want nothing, got %q\n", p, g)
		}
	}
	return b.String()
}

// TestNeverHashed: a file no scan hashed (one of a directory that gained
// BigDir files in a call, one larger than maxHash) is no change the next
// walks find, racy as its entry was: no sha256 can confirm it, and its
// stat stands. (Their entries were compared with the zero sha256.)
func TestNeverHashed(t *testing.T) {
	s := settings()
	s.BigDir = 20
	dir := newTreeWith(t, map[string]string{"a.txt": "a\n"}, s)
	callWith(t, dir, s, func() {
		for i := range 30 {
			p := filepath.Join(dir, "dist", fmt.Sprintf("chunk%d.js", i))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte("x\n"), 0o644))
		}
		must(t, os.WriteFile(filepath.Join(dir, "huge.bin"), nil, 0o644))
		must(t, os.Truncate(filepath.Join(dir, "huge.bin"), maxHash+1))
	})
	for range 2 {
		if again := callWith(t, dir, s, func() {}); len(again.Files) > 0 || again.Outside != nil {
			t.Fatalf("a whole walk said %q, outside %+v", said(again), again.Outside)
		}
	}
	// A real change is still found.
	ch := callWith(t, dir, s, func() { must(t, os.WriteFile(filepath.Join(dir, "dist", "chunk3.js"), []byte("y\n"), 0o644)) })
	if got := said(ch); !slices.Equal(got, []string{"M dist/chunk3.js"}) {
		t.Fatalf("said %q", got)
	}
}

// TestParallelCalls: rounds of calls at once on one tree, as hosts send a
// model turn's tool calls (shells that each write a file of their own,
// edits of other files, said): no change made while calls overlap is
// "outside calls"; every file a shell wrote is named by its own call,
// every file an edit wrote by the edit (and by an overlapping shell only
// as said by it); undoing every call takes every file back.
func TestParallelCalls(t *testing.T) {
	rounds := 6
	dir := newTree(t, map[string]string{"e0.txt": "e\n", "e1.txt": "e\n"})
	ctx := context.Background()
	var all []int64
	for round := range rounds {
		type result struct {
			ch   *outcome.Changes
			mine string
		}
		results := make(chan result, 8)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				name := fmt.Sprintf("r%03d_s%d.txt", round, i)
				c, err := Begin(ctx, "shell", dir, true, settings())
				if err != nil {
					t.Error(err)
					return
				}
				must(t, os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o644))
				time.Sleep(time.Duration(i) * time.Millisecond)
				ch, err := c.End(ctx, nil)
				if err != nil {
					t.Error(err)
					return
				}
				results <- result{ch, name}
			})
		}
		for i := range 2 {
			wg.Go(func() {
				name := fmt.Sprintf("e%d.txt", i)
				p := filepath.Join(dir, name)
				defer Writing(settings())() // as cmdline marks a write in flight
				began := time.Now()
				before, _ := os.ReadFile(p)
				after := append(slices.Clone(before), fmt.Sprintf("%d\n", round)...)
				must(t, os.WriteFile(p, after, 0o644))
				ch, err := Said(ctx, "edit", dir, settings(), began, []outcome.Wrote{{Path: p, Before: before, Existed: true, After: after, Exists: true}})
				if err != nil {
					t.Error(err)
					return
				}
				results <- result{ch, name}
			})
		}
		wg.Wait()
		close(results)
		named := map[string]int64{}
		for r := range results {
			all = append(all, r.ch.Call)
			if r.ch.Outside != nil {
				b, _ := os.ReadFile(filepath.Join(os.Getenv("TOOLKIT_STATE"), "history", "calls.jsonl"))
				t.Fatalf("round %d: call %d said outside calls: %+v\n%s", round, r.ch.Call, r.ch.Outside.Files, b)
			}
			found := false
			for _, f := range r.ch.Files {
				if f.Path == r.mine && f.SaidBy == 0 {
					found = true
				}
				if strings.HasPrefix(f.Path, "e") && f.Path != r.mine && f.SaidBy == 0 {
					t.Errorf("round %d: call %d says the edit's %s as its own", round, r.ch.Call, f.Path)
				}
				if f.SaidBy == 0 {
					named[f.Path] = r.ch.Call
				}
			}
			if !found {
				t.Errorf("round %d: call %d does not name its own %s: %q", round, r.ch.Call, r.mine, said(r.ch))
			}
		}
	}
	// Each call undone, the last first: every file back as it was.
	slices.Sort(all)
	for _, n := range slices.Backward(all) {
		if _, _, err := UndoCalls(ctx, UndoArgs{Call: n, Force: true}, settings()); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := filepath.Glob(filepath.Join(dir, "r*"))
	if len(got) > 0 {
		t.Fatalf("left after every undo: %v", got)
	}
	for _, e := range []string{"e0.txt", "e1.txt"} {
		if b, _ := os.ReadFile(filepath.Join(dir, e)); string(b) != "e\n" {
			t.Fatalf("%s after every undo: %q", e, b)
		}
	}
}
