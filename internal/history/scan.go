package history

import (
	"context"
	"crypto/sha256"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/history/index"
	"toolkit/internal/walk"
)

// heavyNames are the directories kept as one entry each, whatever they
// hold: installed packages and caches, which a call may change by the
// thousand and which can be made again (Codex's list of names it never
// snapshots).
var heavyNames = []string{"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".cache"}

func isHeavy(name string) bool { return slices.Contains(heavyNames, name) }

// maxIgnored is the largest ignored file that is tracked: the small files
// git clean destroys and no one can make again (.env, local settings).
const maxIgnored = 64 << 10

// racyWindow: an entry whose times are within this of the scan that saw it
// is racy (index.Racy), as git marks an entry whose mtime is not before its
// index's: a same-size change in the same clock tick (4 ms on a kernel of
// 250 Hz without fine-grained timestamps) leaves its stat unchanged.
const racyWindow = 20 * time.Millisecond

// seen is an entry a walk found.
type seen struct {
	index.Entry
}

// track walks what history tracks under top, as grep and glob walk it,
// hidden names included, .git never; heavy directories as themselves
// (flags index.Heavy), not gone into; the small files the ignore files leave out
// too. FIFOs, sockets and devices are for add to leave out; so is the
// directory skip (the state directory, when it is inside the tree). add is
// called for each entry (from several goroutines at once), and says
// whether a directory is gone into. With only, the walk lists anew only
// the directories only names (and goes through those above them): the
// entries of the others are as the index has them.
func track(ctx context.Context, top, skip string, only *dirty, add func(e walk.Entry, flags uint8) bool) error {
	o := walk.Options{Hidden: true, Ignored: func(e walk.Entry) {
		if e.Type.IsRegular() && only.lists(parentOf(e.Path)) {
			if st, err := e.Stat(); err == nil && st.Size <= maxIgnored {
				add(e, 0)
			}
		}
	}}
	_, err := walk.Dir(ctx, nil, top, o, func(e walk.Entry) bool {
		isDir := e.Type.IsDir()
		heavy := isDir && isHeavy(e.Name)
		switch {
		case isDir && e.Path == skip:
			return false
		case !only.lists(parentOf(e.Path)):
			// Unchanged: gone through on the way to a change.
			return isDir && !heavy && only.goesInto(e.Path)
		case heavy:
			add(e, index.Heavy)
			return false
		}
		return add(e, 0) && isDir && only.goesInto(e.Path)
	})
	if err != nil {
		return err
	}
	return ctx.Err()
}

// walkTree lists the entries track finds under top, sorted by path.
func walkTree(ctx context.Context, top, skip string, only *dirty) ([]seen, error) {
	var mu sync.Mutex
	var out []seen
	err := track(ctx, top, skip, only, func(e walk.Entry, flags uint8) bool {
		st, err := e.Stat()
		if err != nil {
			return false
		}
		en := index.Entry{Path: e.Path, Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev, Flags: flags}
		switch st.Mode & index.TypeMask {
		case index.TypeReg, index.TypeLink, index.TypeDir:
		default:
			return false
		}
		if en.IsDir() {
			en.Size = 0 // a directory's size says nothing of what it holds
		}
		mu.Lock()
		out = append(out, seen{en})
		mu.Unlock()
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b seen) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// parentOf is the directory a path of the tree is in, "" for the top.
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// dirty is what a tree's keeper saw change since the index was made: the
// directories whose entries changed (dirs), and those whose whole tree is
// to be walked anew (trees: one made, moved in, or whose ignore file
// changed). A nil dirty is the whole tree.
type dirty struct {
	dirs, trees map[string]bool
	above       map[string]bool // the directories above those, the top ("") included
	idx         *index.Index
}

// newDirty is an empty dirty set; its idx is set before a walk.
func newDirty() *dirty {
	return &dirty{dirs: map[string]bool{}, trees: map[string]bool{}, above: map[string]bool{}}
}

// empty says nothing changed.
func (d *dirty) empty() bool { return len(d.dirs) == 0 && len(d.trees) == 0 }

// add adds a directory whose entries changed, or whose whole tree is to be
// walked.
func (d *dirty) add(dir string, tree bool) {
	if tree {
		d.trees[dir] = true
	} else {
		d.dirs[dir] = true
	}
	for p := dir; p != ""; {
		p = parentOf(p)
		if d.above[p] {
			break
		}
		d.above[p] = true
	}
}

// lists says whether the walk lists dir's entries anew: it changed, it is
// in a tree walked anew, or the index does not have it (a new directory;
// with no idx, only the directories named are listed).
func (d *dirty) lists(dir string) bool {
	if d == nil || d.dirs[dir] {
		return true
	}
	for p := dir; ; p = parentOf(p) {
		if d.trees[p] {
			return true
		}
		if p == "" {
			break
		}
	}
	return dir != "" && d.idx != nil && d.idx.Find(dir) == nil
}

// listed says whether a scan of tree lists rel, a path that is there:
// whether the walk goes through its directories (none ignored, heavy or
// skipped) and tracks it (not ignored, or an ignored file of at most
// maxIgnored). Only rel's directory is listed, and the ones above it gone
// through.
func listed(ctx context.Context, tree, skip, rel string) bool {
	only := newDirty()
	only.add(parentOf(rel), false)
	var found atomic.Bool
	_ = track(ctx, tree, skip, only, func(e walk.Entry, _ uint8) bool {
		if e.Path == rel {
			found.Store(true)
		}
		return false
	})
	return found.Load()
}

// goesInto says whether the walk goes into dir: to list it, or on the way
// to one it lists.
func (d *dirty) goesInto(dir string) bool {
	return d == nil || d.above[dir] || d.lists(dir)
}

// merge is the tree as a walk of all of it would have found it, from what
// the walk of the changed directories found: their entries as walked, the
// index's others as they were (nothing changed in them, so their entries
// need no second look: not index.Racy), less what was under a directory that is
// no longer there.
func (d *dirty) merge(walked []seen) []seen {
	old := d.idx.Entries
	out := make([]seen, 0, len(old)+len(walked))
	// Sorted, the entries of a directory mostly come together: the last
	// directory's answer is asked for again and again.
	lastDir, lastLists := "\x00", false
	lists := func(dir string) bool {
		if dir != lastDir {
			lastDir, lastLists = dir, d.lists(dir)
		}
		return lastLists
	}
	i, j := 0, 0
	for i < len(old) || j < len(walked) {
		switch {
		case j == len(walked) || i < len(old) && old[i].Path < walked[j].Path:
			if !lists(parentOf(old[i].Path)) {
				e := old[i]
				e.Flags &^= index.Racy
				out = append(out, seen{e})
			}
			i++
		case i == len(old) || walked[j].Path < old[i].Path:
			out = append(out, walked[j])
			j++
		default:
			out = append(out, walked[j])
			i, j = i+1, j+1
		}
	}
	// A directory sorts before what it holds: one pass finds each entry's
	// directory kept or not.
	dirs := make(map[string]bool, len(out)/8)
	dirs[""] = true
	kept := out[:0]
	for _, s := range out {
		if !dirs[parentOf(s.Path)] {
			continue
		}
		if s.IsDir() && s.Flags&index.Heavy == 0 {
			dirs[s.Path] = true
		}
		kept = append(kept, s)
	}
	return kept
}

// content reads what an entry of the tree r holds, if its stat is still
// the entry's: a file's bytes (nil over maxHash: it is then tracked by its
// stat alone), a link's target. ok is false where it could not be read as
// the entry it was.
func (s *seen) content(r *os.Root) (b []byte, ok bool) {
	if s.IsReg() && s.Size > maxHash || !s.IsReg() && !s.IsLink() {
		return nil, true
	}
	return readEntry(r, &s.Entry)
}

// maxHash is the largest file hashed; a larger one is tracked by its stat
// alone, and is never restorable.
const maxHash = 64 << 20

// markRacy flags the entries whose times are too near when the scan began.
func markRacy(es []seen, began time.Time) {
	edge := began.Add(-racyWindow).UnixNano()
	for i := range es {
		if es[i].Mtime >= edge || es[i].Ctime >= edge {
			es[i].Flags |= index.Racy
		}
	}
}

// hashOf is the sha256 of b.
func hashOf(b []byte) [32]byte { return sha256.Sum256(b) }

// now is the time, for the scans' racy rule; a test moves it.
var now = time.Now

// statOf is a path's entry as a scan would make it, without a walk: for the
// files write, edit and patch changed.
func statOf(top, rel string) (index.Entry, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(top+"/"+rel, &st); err != nil {
		return index.Entry{}, false
	}
	e := index.Entry{Path: rel, Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
	return e, true
}
