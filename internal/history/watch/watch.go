// Package watch watches a tree's directories with inotify: which of them
// changed since a point it answered (a tree's history keeper answers each
// call's ask from it), and that something changed (a wait). A directory
// made in the tree is watched with all under it; an overflow of the
// kernel's queue, or more directories than the watches toolkit may take,
// answers "the whole tree".
package watch

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/walk"
)

// Watcher watches a tree's directories: what changed in them since each
// point it answered.
type Watcher struct {
	tree string
	o    Options
	f    *os.File // the inotify instance, read through the poller
	raw  syscall.RawConn

	mu    sync.Mutex
	dirs  map[int]string // watch → its directory, "" for the top
	wds   map[string]int
	heavy map[int]bool // a heavy directory's watch: a change in it is its parent's
	max   int          // the most watches
	gen   uint64       // this keeper, at random
	seq   uint64       // the point events are marked with now
	floor uint64       // an ask from before this point is answered "whole"
	marks map[string]mark
	buf   []byte
	gone  chan struct{} // closed once the tree's own watch goes: the tree was removed or moved
	moved chan struct{} // signalled (never blocking) when a change is marked
}

// mark is a changed directory: since when, and whether its whole tree.
type mark struct {
	seq  uint64
	tree bool
}

// The events a directory is watched for: every change to what it holds.
const (
	watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
		unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
		unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
	heavyMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
)

// ErrTooMany: the tree has more directories than the watcher may watch.
var ErrTooMany = errors.New("more directories than the watches toolkit may take (half of fs.inotify.max_user_watches)")

// Options say what a watcher watches.
type Options struct {
	// Dirs lists the directories to watch at the start ("" the top), with
	// add, which says whether to go on: history's walk, under its ignore
	// rules, or a wait's, under grep's.
	Dirs func(ctx context.Context, add func(rel string) bool) error
	// Skip is a directory never watched, nor gone into (the state
	// directory, inside the tree); "" for none.
	Skip string
	// Heavy says a directory is watched for its own entries only, its
	// changes its parent's (node_modules); nil for none.
	Heavy func(name string) bool
	// Max bounds the watches (0: half of what the system allows the user).
	Max int
}

// New watches every directory o.Dirs lists under tree, and those made in
// it since.
func New(ctx context.Context, tree string, o Options) (*Watcher, error) {
	max := o.Max
	if o.Heavy == nil {
		o.Heavy = func(string) bool { return false }
	}
	if max <= 0 {
		b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || n <= 0 {
			n = 8192
		}
		max = n / 2
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "inotify")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	w := &Watcher{tree: tree, o: o, f: f, raw: raw, dirs: map[int]string{}, wds: map[string]int{}, heavy: map[int]bool{},
		max: max, gen: binary.LittleEndian.Uint64(seed[:]) >> 1, seq: 1, marks: map[string]mark{}, buf: make([]byte, 64<<10),
		gone: make(chan struct{}), moved: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	err = w.watch("")
	if err == nil {
		err = w.addWatches(ctx, "", true)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Close ends the watches.
func (w *Watcher) Close() { w.f.Close() }

// Gone is closed once the tree itself is removed or moved away.
func (w *Watcher) Gone() <-chan struct{} { return w.gone }

// Moved gets a value when a change is marked (at most one waits: a
// reader that was away sees one for all).
func (w *Watcher) Moved() <-chan struct{} { return w.moved }

// watch adds a watch on the directory rel (again: a directory made anew
// under a name watched before is another, with a watch of its own).
func (w *Watcher) watch(rel string) error {
	if len(w.dirs) >= w.max {
		return ErrTooMany
	}
	heavy := rel != "" && w.o.Heavy(filepath.Base(rel))
	mask := uint32(watchMask)
	if heavy {
		mask = heavyMask
	}
	var wd int
	err := w.control(func(fd int) error {
		var err error
		wd, err = unix.InotifyAddWatch(fd, filepath.Join(w.tree, rel), mask)
		return err
	})
	if err != nil {
		return nil // gone, or not a directory: its parent's events say so
	}
	if old, ok := w.wds[rel]; ok && old != wd {
		delete(w.dirs, old) // its directory is not at rel any more
		delete(w.heavy, old)
	}
	w.dirs[wd], w.wds[rel] = rel, wd
	if heavy {
		w.heavy[wd] = true
	}
	return nil
}

func (w *Watcher) control(f func(fd int) error) error {
	var err error
	if cerr := w.raw.Control(func(fd uintptr) { err = f(int(fd)) }); cerr != nil {
		return cerr
	}
	return err
}

// addWatches watches the directories under rel: as history tracks them
// (ignore rules) at the start; all of them for one made or moved in since,
// whose ignore rules above are not at hand (a directory watched that
// history does not track costs a watch, and a look at it when it changes).
func (w *Watcher) addWatches(ctx context.Context, rel string, tracked bool) error {
	var mu sync.Mutex
	var werr error
	add := func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = w.watch(p)
		}
		return werr == nil
	}
	if tracked {
		if err := w.o.Dirs(ctx, add); err != nil {
			return err
		}
		return werr
	}
	// A directory made or moved in: it and every directory under it, by a
	// walk that reads no ignore file; never .git nor the state directory,
	// and not into a heavy directory. One gone already is left to its
	// parent's events.
	watched := func(p, name string) bool {
		return (p == "" || name != ".git" && p != w.o.Skip) && add(p) && (p == "" || !w.o.Heavy(name))
	}
	if watched(rel, filepath.Base(rel)) {
		_, _ = walk.Dir(ctx, nil, filepath.Join(w.tree, rel), walk.Options{Hidden: true, NoIgnore: true}, func(e walk.Entry) bool {
			return e.Type.IsDir() && watched(joinRel(rel, e.Path), e.Name)
		})
	}
	return werr
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Run reads the events as they come, until the watcher is closed.
func (w *Watcher) Run() {
	for {
		err := w.raw.Read(func(fd uintptr) bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.drain(int(fd)) != unix.EAGAIN
		})
		if err != nil {
			return
		}
	}
}

// drain reads and marks every event queued; held under w.mu, so that an
// answer is given only after every event queued before its ask is marked.
func (w *Watcher) drain(fd int) error {
	for {
		n, err := unix.Read(fd, w.buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return io.EOF
		}
		w.events(w.buf[:n])
	}
}

// events marks what a read of events says changed.
func (w *Watcher) events(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int(int32(binary.NativeEndian.Uint32(b[0:])))
		mask := binary.NativeEndian.Uint32(b[4:])
		n := int(binary.NativeEndian.Uint32(b[12:]))
		if unix.SizeofInotifyEvent+n > len(b) {
			return
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n]), "\x00")
		b = b[unix.SizeofInotifyEvent+n:]
		w.event(wd, mask, name)
	}
}

func (w *Watcher) event(wd int, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		// Events were lost: every point before now is answered "whole".
		w.floor = w.seq
		w.mark("", true)
		return
	}
	dir, ok := w.dirs[wd]
	if !ok {
		return
	}
	switch {
	case mask&unix.IN_IGNORED != 0 && dir == "":
		// The tree itself went: nothing is left to watch.
		delete(w.dirs, wd)
		select {
		case <-w.gone:
		default:
			close(w.gone)
		}
		return
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 && dir == "":
		// The tree was removed or moved away: the watch goes with it
		// (IN_IGNORED), or must.
		_ = w.control(func(fd int) error { _, err := unix.InotifyRmWatch(fd, uint32(wd)); return err })
		return
	case mask&unix.IN_IGNORED != 0:
		// The directory went (or was moved off the tree's paths): its
		// watch with it.
		delete(w.dirs, wd)
		if w.wds[dir] == wd {
			delete(w.wds, dir)
		}
		delete(w.heavy, wd)
		return
	case w.heavy[wd] || name == "":
		// A heavy directory's own stat changed, or a watched directory
		// itself did: its parent lists it again.
		if dir != "" {
			w.mark(parentOf(dir), false)
		}
		return
	}
	w.mark(dir, false)
	child := joinRel(dir, name)
	if mask&unix.IN_ISDIR != 0 {
		switch {
		case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
			// A directory made or moved in: watched, and walked whole.
			if w.addWatches(context.Background(), child, false) != nil {
				w.floor = w.seq // out of watches: walk it all from now
			}
			w.mark(child, true)
		case mask&unix.IN_DELETE != 0:
			// Its watch goes with it (IN_IGNORED).
			w.mark(child, true)
		case mask&unix.IN_MOVED_FROM != 0:
			w.unwatchUnder(child)
			w.mark(child, true)
		}
	}
	if name == ".gitignore" || name == ".ignore" {
		// What is tracked under dir may have changed.
		if w.addWatches(context.Background(), dir, false) != nil {
			w.floor = w.seq
		}
		w.mark(dir, true)
	}
}

// unwatchUnder forgets the watches of rel and under it, moved away: their
// directories are elsewhere now, or nowhere.
func (w *Watcher) unwatchUnder(rel string) {
	for p, wd := range w.wds {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			_ = w.control(func(fd int) error { _, err := unix.InotifyRmWatch(fd, uint32(wd)); return err })
			delete(w.wds, p)
			delete(w.dirs, wd)
			delete(w.heavy, wd)
		}
	}
}

func (w *Watcher) mark(dir string, tree bool) {
	w.marks[dir] = mark{seq: w.seq, tree: tree || w.marks[dir].tree}
	select {
	case w.moved <- struct{}{}:
	default:
	}
}

// ChangedSince writes the answer to an ask from the point (gen, since):
// every event queued until now read first. (A tree's keeper answers the
// calls' asks with it.)
func (w *Watcher) ChangedSince(gen, since uint64, out io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.control(func(fd int) error { return w.drain(fd) })
	whole := gen != w.gen || since < w.floor || since > w.seq
	fmt.Fprintf(out, "%d %d %d\n", w.gen, w.seq, map[bool]int{false: 0, true: 1}[whole])
	if !whole {
		for p, m := range w.marks {
			switch {
			case m.seq <= since:
				// The asker's index has it: no ask from before since is
				// answered from here on.
				delete(w.marks, p)
			case m.tree:
				fmt.Fprintf(out, "t%s\x00", p)
			default:
				fmt.Fprintf(out, "d%s\x00", p)
			}
		}
		w.floor = max(w.floor, since)
	}
	w.seq++
}

// parentOf is the directory a path of the tree is in, "" for the top.
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
