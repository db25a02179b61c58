// Package walk walks a directory tree for grep and glob, as git sees it:
// what .gitignore, .ignore and .git/info/exclude ignore is left out (and an
// ignored directory is not gone into), .git is left out, hidden names (a
// leading dot) are left out unless asked for. Directories are read by
// several goroutines at once (one per core); what the walk finds comes in
// no particular order.
//
// Confinement: the start is opened through an os.Root (toolkit's --root),
// and everything under it is opened one name at a time, relative to the
// descriptor of the directory it is in, with O_NOFOLLOW: a name from a
// directory listing holds no "/" and cannot be "..", and a symbolic link is
// never followed, so nothing the walk opens is outside its start. (os.Root
// would do the same, but costs an lstat of every entry a directory lists,
// and more system calls to open each name.)
package walk

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/ignore"
	"toolkit/internal/root"
)

// Options say what the walk leaves out.
type Options struct {
	Hidden   bool // walk hidden names too
	NoIgnore bool // ignore no ignore file, and go into .git
	// Ignored, when set, is called for each file (not directory) an
	// ignore file leaves out, as visit is: history keeps the small ones.
	Ignored func(Entry)
}

// Entry is a thing the walk found.
type Entry struct {
	// Path is its path from the start, with / between names.
	Path string
	Name string
	Type fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for a regular file, or another type
	// dir is the descriptor of the directory it is in, open while the
	// visit runs.
	dir int
}

// dirFlags open a directory, and nothing else.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// ModTime is when the entry last changed (a link's own time, not its
// target's).
func (e Entry) ModTime() (time.Time, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(e.dir, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, err
	}
	return time.Unix(st.Mtim.Unix()), nil
}

// Stat is the entry's stat, a link's own.
func (e Entry) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(e.dir, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// Readlink is a link's target.
func (e Entry) Readlink() (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(e.dir, e.Name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Stats count what the walk left out.
type Stats struct {
	Ignored atomic.Int64 // by an ignore file
	Hidden  atomic.Int64 // hidden names
	Errors  atomic.Int64 // directories that could not be read
}

// The ignore files a directory may hold, the last deciding first.
var ignoreFiles = []string{".gitignore", ".ignore"}

// Walk walks the tree under start, calling visit for each entry it does
// not leave out (from several goroutines at once), directories included.
// A visit that returns false for a directory keeps the walk out of it.
// top says how the start is reached from the top of its git repository
// ("" when start is the top, or in no repository): ignore files between
// the top and the start apply too, and those are given in above.
func Walk(ctx context.Context, start *os.Root, above ignore.Stack, top string, o Options, visit func(Entry) bool) *Stats {
	w := &walker{ctx: ctx, top: top, o: o, visit: visit, stats: &Stats{}}
	f, err := start.Open(".")
	if err != nil {
		w.stats.Errors.Add(1)
		return w.stats
	}
	fd, err := dupFD(f)
	f.Close()
	if err != nil {
		w.stats.Errors.Add(1)
		return w.stats
	}
	w.cond.L = &w.mu
	w.todo = []dirWork{{fd: fd, rel: "", stack: above}}
	var wg sync.WaitGroup
	for range workers() {
		wg.Go(w.work)
	}
	wg.Wait()
	return w.stats
}

// workers is how many goroutines a walk runs: one a P, at least two. The
// first walk of a process gives the runtime a P more than that, unless the
// environment sets GOMAXPROCS: with every walker in a system call (an
// open, a read, a listing), one P is then idle, and the runtime's monitor
// leaves a P in a call be. Without one, it takes the P of any call longer
// than 20 µs and wakes a thread to look for work, which finds none: on Go's
// tree, a search made twice the context switches (1,051 against 472) and
// took 5-9 % longer for four patterns of five.
var workers = sync.OnceValue(func() int {
	n := max(2, runtime.GOMAXPROCS(0))
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(n + 1)
	}
	return n
})

// The walk's goroutines share one stack of work: directories to read, and
// files to visit. Each takes the newest, reads it, puts its subdirectories
// on the stack (not yet open: their names, and the open directory they are
// in), and only then visits its files, so that a goroutine with nothing to
// do takes a subdirectory at once rather than waiting for a directory of
// many files to be searched. While a goroutine waits with nothing to take,
// the one visiting a directory's files puts half of those left on the
// stack for it, so that the goroutines search a directory of many files
// together rather than one of them searching it all while the others wait
// (a directory of 2,319 Go files was searched in 0.71 of the time on two
// CPUs). Files are not shared otherwise: a share costs more than visiting
// a few files where a visit only matches a name (glob). Newest first, the
// walk goes depth first, and the directories open at once are about those
// on the way down.
type walker struct {
	ctx   context.Context
	top   string
	o     Options
	visit func(Entry) bool
	stats *Stats

	mu      sync.Mutex
	cond    sync.Cond
	todo    []dirWork
	reading int // work taken from todo and under way
	// hungry is how many goroutines wait for work that none has been put
	// on the stack for yet; changed under mu, read without it.
	hungry atomic.Int32
}

// dirWork is a directory to read: its descriptor (or its name in parent),
// its path from the start, and the ignore files that apply in it; or, with
// files, some of parent's files to visit.
type dirWork struct {
	fd     int
	parent *openDir
	name   string
	rel    string
	stack  ignore.Stack
	files  []Entry
}

// openDir is a directory's descriptor, closed when the last of its reader
// and its subdirectories waiting to be opened lets it go.
type openDir struct {
	fd   int
	refs atomic.Int32
}

func (d *openDir) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// work takes work from the stack until none is left and none is under way.
func (w *walker) work() {
	var l lister
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.todo) == 0 && w.reading > 0 {
			w.hungry.Add(1)
			w.cond.Wait()
		}
		if len(w.todo) == 0 {
			w.cond.Broadcast() // the walk is over: the others may stop too
			return
		}
		d := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		w.reading++
		w.mu.Unlock()
		w.dir(d, &l)
		w.mu.Lock()
		w.reading--
	}
}

// push puts work on the stack: subdirectories of an open directory, or
// some of its files.
func (w *walker) push(subs []dirWork) {
	w.mu.Lock()
	w.todo = append(w.todo, subs...)
	w.hungry.Store(max(0, w.hungry.Load()-int32(len(subs))))
	w.mu.Unlock()
	if len(subs) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
}

// fromTop is rel, a path from the start, from the top of the repository.
func (w *walker) fromTop(rel string) string {
	switch {
	case w.top == "":
		return rel
	case rel == "":
		return w.top
	}
	return w.top + "/" + rel
}

func (w *walker) dir(d dirWork, l *lister) {
	if d.files != nil {
		w.visitFiles(d.parent, d.files)
		d.parent.release()
		return
	}
	if d.parent != nil {
		// O_DIRECTORY refuses anything else before opening it (a FIFO
		// put in its place is not waited on), so no O_NONBLOCK: a
		// descriptor without it is read without Go's poller trying to
		// take it.
		fd, err := -1, error(nil)
		if w.ctx.Err() == nil {
			fd, err = unix.Openat(d.parent.fd, d.name, dirFlags, 0)
		}
		d.parent.release()
		if err != nil {
			w.stats.Errors.Add(1)
		}
		if fd < 0 {
			return
		}
		d.fd = fd
	}
	self := &openDir{fd: d.fd}
	self.refs.Store(1)
	defer self.release()
	if w.ctx.Err() != nil {
		return
	}
	entries, err := l.list(d.fd)
	if err != nil {
		w.stats.Errors.Add(1)
		return
	}
	stack := d.stack
	if !w.o.NoIgnore {
		base := w.fromTop(d.rel)
		if d.rel != "" && slices.ContainsFunc(entries, func(e dirent) bool { return e.name == ".git" }) {
			if git, ok := nestedRepo(d.fd); ok {
				stack = repoExcludes(git, base)
			}
		}
		for _, name := range ignoreFiles {
			if !slices.ContainsFunc(entries, func(e dirent) bool { return e.name == name }) {
				continue
			}
			if rules, ok := readSmall(d.fd, name); ok {
				stack = append(slices.Clip(stack), ignore.Parse(base, rules))
			}
		}
	}
	// Directories first, put on the stack for any goroutine to take; then
	// the rest.
	var subs []dirWork
	files := l.files[:0]
	for _, dirs := range []bool{true, false} {
		for _, e := range entries {
			isDir := e.typ.IsDir()
			if isDir != dirs {
				continue
			}
			name := e.name
			rel := name
			if d.rel != "" {
				rel = d.rel + "/" + name
			}
			switch {
			case name == ".git" && !w.o.NoIgnore:
				continue
			case name[0] == '.' && !w.o.Hidden:
				w.stats.Hidden.Add(1)
				continue
			case !w.o.NoIgnore && stack.Ignored(w.fromTop(rel), isDir):
				w.stats.Ignored.Add(1)
				if w.o.Ignored != nil && !isDir {
					w.o.Ignored(Entry{Path: rel, Name: name, Type: e.typ, dir: d.fd})
				}
				continue
			}
			e := Entry{Path: rel, Name: name, Type: e.typ, dir: d.fd}
			switch {
			case !isDir:
				files = append(files, e)
			case w.visit(e):
				subs = append(subs, dirWork{parent: self, name: name, rel: rel, stack: stack})
			}
		}
		if dirs && len(subs) > 0 {
			self.refs.Add(int32(len(subs)))
			w.push(subs)
		}
	}
	l.files = files
	w.visitFiles(self, files)
}

// visitFiles visits files of the open directory d, unless the walk has
// been called off; while a goroutine waits for work, half of those left
// are put on the stack for it.
func (w *walker) visitFiles(d *openDir, files []Entry) {
	if w.ctx.Err() != nil {
		return
	}
	for i := 0; i < len(files); i++ {
		if left := len(files) - i; left > 1 && w.hungry.Load() > 0 {
			half := slices.Clone(files[len(files)-left/2:])
			files = files[:len(files)-left/2]
			d.refs.Add(1)
			w.push([]dirWork{{parent: d, files: half}})
		}
		w.visit(files[i])
	}
}

// dupFD is a descriptor of its own for the open directory f.
func dupFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	dup, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return dup, derr
}

// maxIgnoreFile bounds an ignore file read: a larger one is not one. git
// reads any size; generated ignore files of a few MiB are real.
const maxIgnoreFile = 16 << 20

// readSmall reads a regular file of the directory dir, if it is one and
// small.
func readSmall(dir int, name string) (string, bool) {
	b, err := Entry{Name: name, dir: dir}.ReadFile(maxIgnoreFile)
	return string(b), err == nil
}

// One is the entry name of dir, as a walk would give it, for a search of one
// file; close it when done with it.
func One(dir *os.Root, name string) (Entry, func(), error) {
	f, err := dir.Open(".")
	if err != nil {
		return Entry{}, nil, err
	}
	defer f.Close()
	fd, err := dupFD(f)
	if err != nil {
		return Entry{}, nil, err
	}
	return Entry{Path: name, Name: name, dir: fd}, func() { unix.Close(fd) }, nil
}

// Above finds the ignore files that apply at dir (a host path) from the
// directories above it, up to the top of its git repository, and never
// above limit (the confinement root, "" for none). It returns them, and
// dir's path from the top. Outside a repository, none apply.
func Above(dir, limit string, o Options) (ignore.Stack, string) {
	if o.NoIgnore {
		return nil, ""
	}
	var up []string // dir's names, from the top down
	top, err := filepath.Abs(dir)
	if err != nil {
		return nil, ""
	}
	for {
		if fi, err := os.Lstat(top + "/.git"); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			break
		}
		parent := path.Dir(top)
		if parent == top || limit != "" && !root.Within(parent, path.Clean(limit)) {
			return nil, "" // no repository
		}
		up = append([]string{path.Base(top)}, up...)
		top = parent
	}
	r, err := os.OpenRoot(top)
	if err != nil {
		return nil, ""
	}
	defer r.Close()
	one := func(name string) (string, bool) {
		d, base := path.Split(name)
		if d == "" {
			d = "."
		}
		sub, err := r.OpenRoot(d)
		if err != nil {
			return "", false
		}
		defer sub.Close()
		e, done, err := One(sub, base)
		if err != nil {
			return "", false
		}
		defer done()
		b, err := e.ReadFile(maxIgnoreFile)
		return string(b), err == nil
	}
	stack := repoExcludes(top+"/.git", "")
	rel := ""
	for i := 0; i < len(up); i++ {
		for _, name := range ignoreFiles {
			if text, ok := one(path.Join(rel, name)); ok {
				stack = append(stack, ignore.Parse(rel, text))
			}
		}
		if rel == "" {
			rel = up[i]
		} else {
			rel += "/" + up[i]
		}
	}
	return stack, strings.Join(up, "/")
}

// Dir walks the directory name, inside r when r is not nil (--root), as
// Walk does, the ignore files above it applying as git applies them; each
// entry's Path is from name.
func Dir(ctx context.Context, r *root.Root, name string, o Options, visit func(Entry) bool) (*Stats, error) {
	start, err := r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	defer start.Close()
	host, err := r.HostPath(name)
	if err != nil {
		return nil, err
	}
	limit := ""
	if r != nil {
		limit = r.Dir()
	}
	above, top := Above(host, limit, o)
	return Walk(ctx, start, above, top, o, visit), nil
}

// Join is the path a search shows for rel, a path from dir as the call
// gave it: rel itself when dir is the working directory.
func Join(dir, rel string) string {
	if dir == "." || dir == "./" {
		return rel
	}
	return strings.TrimSuffix(dir, "/") + "/" + rel
}
