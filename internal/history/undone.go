package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/history/pack"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// readBack looks at each path the undo changed once it is done: what
// holds what it was to get back is restored; what does not is left, said
// with why (a directory a call made that holds files no call made). It
// returns what the undo changed, as it is now.
func (p *undoPlan) readBack(look *looker, todo []todo, res *UndoResult) []undone {
	look.forget()
	res.Restored = nil
	var out []undone
	for _, t := range todo {
		now := look.at(t.pp.path)
		us := UndoStep{Path: t.pp.path, Action: t.action, Dir: isDirStep(kindOf(t.cur.Mode), t.pp.to.kind)}
		if holds(now, t.pp.to) {
			res.Restored = append(res.Restored, us)
		} else {
			us.Why = "it does not read back as it was"
			if kindOf(now.Mode) == directory && t.pp.to.kind == absent {
				us.Why = "it holds files no call made, so it stays"
			}
			res.Left = append(res.Left, us)
		}
		if !sameSeen(t.cur, now) {
			out = append(out, undone{path: t.pp.path, was: t.cur, now: now})
		}
	}
	return out
}

// sameSeen says whether two looks at a path saw the same.
func sameSeen(a, b replace.Seen) bool { return a.Mode == b.Mode && a.SHA256 == b.SHA256 }

// undone is a path an undo changed: what it held before, and now.
type undone struct {
	path     string
	was, now replace.Seen
}

// looker looks at the paths of a tree with no link on the way
// (root.OpenDirect), each directory opened once, from several goroutines.
type looker struct {
	r     *root.Root
	upTo  int64 // a file's bytes are read up to this; a larger one is hashed
	mu    sync.Mutex
	dirs  map[string]*os.File
	nodir map[string]bool
}

func newLooker(r *root.Root, upTo int64) *looker {
	return &looker{r: r, upTo: upTo, dirs: map[string]*os.File{}, nodir: map[string]bool{}}
}

// at is what path holds now: nothing where a link, a file or nothing is
// on its way.
func (l *looker) at(path string) replace.Seen {
	d := l.dir(filepath.Dir(path))
	if d == nil {
		return replace.Seen{}
	}
	// There and not to be read, it has no sha256: a conflict, unless
	// forced.
	s, _ := replace.LookAt(d, filepath.Base(path), l.upTo)
	return s
}

func (l *looker) dir(at string) *os.File {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := l.dirs[at]; d != nil || l.nodir[at] {
		return d
	}
	d, err := l.r.OpenDirect(at)
	if err != nil {
		// Nothing there, or a link or a file on the way: what is under it
		// is not there as a path of the tree. (A directory that cannot be
		// opened is looked at as nothing too: the commit says why.)
		l.nodir[at] = true
		return nil
	}
	l.dirs[at] = d
	return d
}

// forget closes the directories: a commit may have made or removed them.
func (l *looker) forget() {
	l.close()
	l.dirs, l.nodir = map[string]*os.File{}, map[string]bool{}
}

func (l *looker) close() {
	for _, d := range l.dirs {
		d.Close()
	}
}

// keepUndone records what an undo changed, as it read it back: each path's
// record (a path that became another kind of thing is gone and come, as a
// scan says it), the contents it replaced kept (undoing the undo puts them
// back), and the paths' entries in the tree's index, so that the next scan
// does not find them again.
func (h *history) keepUndone(ctx context.Context, tree string, done []undone, self int64) ([]log.File, error) {
	rels := make([]string, len(done))
	for i, u := range done {
		rels[i] = u.path
	}
	found, v, indexed := index.Lookup(h.indexPath(tree), rels)
	cmp := comparer{h: h, budget: budget{bytes: h.s.MaxCallBytes, files: h.s.MaxCallFiles}}
	skip := h.skip(tree)
	var files []log.File
	var said []index.Delta
	for _, u := range done {
		recs, kept := cmp.undoneRecords(u)
		files = append(files, recs...)
		e := index.Entry{Path: u.path, Mode: u.now.Mode, Size: u.now.Size, Mtime: u.now.Mtime, Ctime: u.now.Ctime, Ino: u.now.Ino, Dev: u.now.Dev}
		if sum, ok := pack.ParseSum(u.now.SHA256); ok {
			e.Sum = sum
			if kept {
				e.Flags |= index.Stored
			}
		}
		if e.IsDir() {
			e.Size = 0
		}
		markEntryRacy(&e, now())
		there := kindOf(u.now.Mode) != absent
		if _, was := found[u.path]; there && !was && !listed(ctx, tree, skip, u.path) {
			there = false // not what a scan tracks: said, and kept out of the index
		}
		said = append(said, index.Delta{Entry: e, There: there})
	}
	if err := h.syncStore(); err != nil || !indexed || len(said) == 0 {
		return files, err
	}
	return files, h.keepEntries(tree, nil, v, said, self)
}

// undoneRecords are the records of what an undo did to one path: M where
// it is the same kind of thing, else gone and come; and whether what it
// holds now is kept.
func (c *comparer) undoneRecords(u undone) ([]log.File, bool) {
	wk, nk := kindOf(u.was.Mode), kindOf(u.now.Mode)
	gone := log.File{Path: u.path, Status: "D", Dir: wk == directory, Pre: u.was.SHA256, PreMode: u.was.Mode, Bytes: u.was.Size}
	if u.was.Bytes != nil {
		gone.PreKept, gone.Why = c.keep(u.was.Bytes, hashOf(u.was.Bytes))
	} else if wk == regular || wk == symlink {
		gone.Why = fmt.Sprintf("too large (history keeps files of up to %s)", text.Bytes(c.h.s.MaxFile))
	}
	came := log.File{Path: u.path, Status: "A", Dir: nk == directory, Post: u.now.SHA256, PostMode: u.now.Mode, Bytes: u.now.Size}
	if u.now.Bytes != nil {
		came.PostKept, _ = c.keep(u.now.Bytes, hashOf(u.now.Bytes))
	}
	if wk == nk {
		m := came
		m.Status, m.Pre, m.PreMode, m.PreKept, m.Why = "M", gone.Pre, gone.PreMode, gone.PreKept, gone.Why
		if wk == regular && u.was.Bytes != nil {
			countLines(&m, u.was.Bytes, u.now.Bytes)
		}
		return []log.File{m}, came.PostKept
	}
	var out []log.File
	if wk != absent {
		if wk == regular && u.was.Bytes != nil {
			countLines(&gone, u.was.Bytes, nil)
		}
		out = append(out, gone)
	}
	if nk != absent {
		if nk == regular {
			countLines(&came, nil, u.now.Bytes)
		}
		out = append(out, came)
	}
	return out, came.PostKept
}
