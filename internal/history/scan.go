package history

import (
	"context"
	"crypto/sha256"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/walk"
)

// heavyNames are the directories kept as one entry each, whatever they
// hold: installed packages and caches, which a call may change by the
// thousand and which can be made again (Codex's list of names it never
// snapshots).
var heavyNames = []string{"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".cache"}

// maxIgnored is the largest ignored file that is tracked: the small files
// git clean destroys and no one can make again (.env, local settings).
const maxIgnored = 64 << 10

// racyWindow: an entry whose times are within this of the scan that saw it
// is racy (Racy), as git marks an entry whose mtime is not before its
// index's: a same-size change in the same clock tick (4 ms on a kernel of
// 250 Hz without fine-grained timestamps) leaves its stat unchanged.
const racyWindow = 20 * time.Millisecond

// seen is an entry a walk found.
type seen struct {
	Entry
}

// walkTree lists the tree under top as grep and glob walk it, hidden names
// included, .git never; heavy directories as themselves; the small files
// the ignore files leave out too. FIFOs, sockets and devices are left out,
// never opened; so is the directory skip (the state directory, when it is
// inside the tree). The entries come sorted by path.
func walkTree(ctx context.Context, top, skip string) ([]seen, error) {
	var mu sync.Mutex
	var out []seen
	add := func(e walk.Entry, flags uint8) bool {
		st, err := e.Stat()
		if err != nil {
			return false
		}
		en := Entry{Path: e.Path, Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev, Flags: flags}
		switch st.Mode & typeMask {
		case typeReg, typeLink, typeDir:
		default:
			return false
		}
		if en.isDir() {
			en.Size = 0 // a directory's size says nothing of what it holds
		}
		mu.Lock()
		out = append(out, seen{en})
		mu.Unlock()
		return true
	}
	o := walk.Options{Hidden: true, Ignored: func(e walk.Entry) {
		if e.Type.IsRegular() {
			if st, err := e.Stat(); err == nil && st.Size <= maxIgnored {
				add(e, 0)
			}
		}
	}}
	_, err := walk.Dir(ctx, nil, top, o, func(e walk.Entry) bool {
		if e.Type.IsDir() && e.Path == skip {
			return false
		}
		if e.Type.IsDir() && slices.Contains(heavyNames, e.Name) {
			add(e, Heavy)
			return false
		}
		return add(e, 0) && e.Type.IsDir()
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b seen) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// content reads what an entry of the tree r holds, if its stat is still
// the entry's: a file's bytes (nil over maxHash: it is then tracked by its
// stat alone), a link's target. ok is false where it could not be read as
// the entry it was.
func (s *seen) content(r *os.Root) (b []byte, ok bool) {
	if s.isReg() && s.Size > maxHash || !s.isReg() && !s.isLink() {
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
			es[i].Flags |= Racy
		}
	}
}

// hashOf is the sha256 of b.
func hashOf(b []byte) [32]byte { return sha256.Sum256(b) }

// now is the time, for the scans' racy rule; a test moves it.
var now = time.Now

// statOf is a path's entry as a scan would make it, without a walk: for the
// files write, edit and patch changed.
func statOf(top, rel string) (Entry, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(top+"/"+rel, &st); err != nil {
		return Entry{}, false
	}
	e := Entry{Path: rel, Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
	return e, true
}
