package history

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"toolkit/internal/diff"
	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/outcome"
	"toolkit/internal/text"
)

// keepSaid keeps what a call said it wrote (write, edit, patch): its
// records, the contents kept and synced, and the paths' entries in the
// tree's index, so that the next scan does not find them again. idx is the
// index in memory, where the call's first scan read it and no call wrote
// it since; else only the paths' entries are looked up, and the new ones
// appended to its delta. A tree with no index yet (or none that
// checks) gets none here: its first scan makes it whole.
func (h *history) keepSaid(ctx context.Context, tree string, idx *index.Index, began time.Time, wrote []outcome.Wrote, self int64) ([]log.File, error) {
	path := h.indexPath(tree)
	var old func(string) *index.Entry
	var indexed bool
	var v index.Version
	if idx != nil {
		old, indexed = idx.Find, !idx.None
	} else {
		// The paths, and the directories above them: a call may have made
		// or removed those.
		var rels []string
		above := map[string]bool{}
		for _, w := range wrote {
			if rel, ok := inTree(tree, w.Path); ok {
				rels = append(rels, rel)
				for d := parentOf(rel); d != "" && !above[d]; d = parentOf(d) {
					above[d] = true
					rels = append(rels, d)
				}
			}
		}
		var found map[string]index.Entry
		found, v, indexed = index.Lookup(path, rels)
		old = func(rel string) *index.Entry {
			if e, ok := found[rel]; ok {
				return &e
			}
			return nil
		}
	}
	files, said := h.said(ctx, tree, old, wrote)
	if indexed {
		files, said = dirsOf(ctx, tree, h.skip(tree), old, began, files, said)
	}
	if err := h.syncStore(); err != nil || !indexed || len(said) == 0 {
		return files, err
	}
	return files, h.keepEntries(tree, idx, v, said, self)
}

// keepEntries puts the entries a call (self) said in the tree's index:
// idx, where its first scan read it and no call wrote it since; else
// appended to the index's delta, which names the index of version v.
// The calls running on the tree but self keep their view of it first.
func (h *history) keepEntries(tree string, idx *index.Index, v index.Version, said []index.Delta, self int64) error {
	h.saveViews(tree, self)
	path := h.indexPath(tree)
	if idx == nil {
		_, err := index.AppendDelta(path, v.Sum, said)
		if !errors.Is(err, index.ErrDeltaFull) {
			return err
		}
		// Past its bound: the index is written whole, with what its said
		// file held.
		if idx = h.readIndex(tree); idx.None {
			return nil
		}
	}
	idx.Apply(said)
	return idx.Write(path)
}

// syncStore syncs what the call kept in the store, before anything names
// it.
func (h *history) syncStore() error {
	if h.store == nil {
		return nil
	}
	return h.store.Sync()
}

// inTree is p's path from tree's top, "/" between names, where p is below
// tree.
func inTree(tree, p string) (string, bool) {
	rel, err := filepath.Rel(tree, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// said makes the records of the files a call said it wrote, their contents
// before and after kept as they are, and the paths' entries from their
// stat now. old is a path's entry before the call, or nil.
func (h *history) said(ctx context.Context, tree string, old func(rel string) *index.Entry, wrote []outcome.Wrote) ([]log.File, []index.Delta) {
	cmp := comparer{h: h, budget: budget{bytes: h.s.MaxCallBytes, files: h.s.MaxCallFiles}}
	skip := h.skip(tree)
	var files []log.File
	var said []index.Delta
	for _, w := range wrote {
		rel, ok := inTree(tree, w.Path)
		if !ok {
			continue // outside the tree
		}
		old := old(rel)
		if !w.Existed && !w.Exists {
			continue
		}
		fr := log.File{Path: rel, Status: w.Status()}
		if old != nil {
			fr.PreMode = old.Mode
		}
		switch {
		case w.Existed && w.Before != nil:
			sum := hashOf(w.Before)
			fr.Pre = hex.EncodeToString(sum[:])
			fr.PreKept, fr.Why = cmp.keep(w.Before, sum)
		case w.Existed:
			fr.Why = fmt.Sprintf("too large (history keeps files of up to %s)", text.Bytes(h.s.MaxFile))
		}
		if w.Exists && w.After == nil {
			// Written as it came (a person's stdin): read back.
			w.After, _ = os.ReadFile(w.Path)
		}
		var post [32]byte
		if w.Exists {
			post = hashOf(w.After)
			fr.Post = hex.EncodeToString(post[:])
			fr.PostKept, _ = cmp.keep(w.After, post)
			fr.Bytes = int64(len(w.After))
		}
		// The entry as a scan would make it now.
		e, ok := statOf(tree, rel)
		if ok && w.Exists {
			e.Sum = post
			if fr.PostKept {
				e.Flags |= index.Stored
			}
			fr.PostMode = e.Mode
			markEntryRacy(&e, now())
		}
		countLines(&fr, w.Before, w.After)
		e.Path = rel
		there := ok && w.Exists
		if there && (old == nil || e.Size > maxIgnored) && !listed(ctx, tree, skip, rel) {
			// Not what a scan tracks (ignored, in a heavy directory): said,
			// and kept out of the index, or the next scan would say it
			// gone. A file already listed that stays small is listed still.
			there = false
		}
		said = append(said, index.Delta{Entry: e, There: there})
		files = append(files, fr)
	}
	return files, said
}

// dirsOf adds to a said call's records the directories it made on the
// way to the files it added, and those it removed with the files it
// removed (an undo's), so that an undo of it removes the ones it made once
// they are empty, and the next scan finds neither again. A directory was
// made by the call if the index did not hold it, a scan tracks it, and,
// where the file system says when a directory was born, it was born once
// the call had begun (an empty one made by hand since the last scan is not
// the call's).
func dirsOf(ctx context.Context, tree, skip string, old func(string) *index.Entry, began time.Time, files []log.File, said []index.Delta) ([]log.File, []index.Delta) {
	looked := map[string]bool{}
	for _, f := range slices.Clone(files) {
		if f.Status == "M" {
			continue
		}
		// Up from the file's directory, to the first one that was there
		// before and is still: so are those above it.
		for d := parentOf(f.Path); d != "" && !looked[d]; d = parentOf(d) {
			looked[d] = true
			was := old(d)
			e, there := statOf(tree, d)
			there = there && e.IsDir()
			if f.Status == "A" && was == nil && there && bornSince(tree+"/"+d, began) && listed(ctx, tree, skip, d) {
				e.Size = 0
				markEntryRacy(&e, now())
				files = append(files, log.File{Path: d, Status: "A", Dir: true, PostMode: e.Mode})
				said = append(said, index.Delta{Entry: e, There: true})
			} else if f.Status == "D" && was != nil && was.IsDir() && !there {
				files = append(files, log.File{Path: d, Status: "D", Dir: true, PreMode: was.Mode})
				said = append(said, index.Delta{Entry: index.Entry{Path: d}})
			} else {
				break
			}
		}
	}
	return files, said
}

// bornSince says whether the directory at path was born at began or after
// it, as far as the file system says (where it does not: true). The file
// system's clock runs up to a tick behind the process's: the racy window
// is allowed for.
func bornSince(path string, began time.Time) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st) != nil || st.Mask&unix.STATX_BTIME == 0 {
		return true
	}
	born := time.Unix(st.Btime.Sec, int64(st.Btime.Nsec))
	return !born.Before(began.Add(-racyWindow))
}

// markEntryRacy flags e racy when its times are too near t.
func markEntryRacy(e *index.Entry, t time.Time) {
	edge := t.Add(-racyWindow).UnixNano()
	if e.Mtime >= edge || e.Ctime >= edge {
		e.Flags |= index.Racy
	}
}

// countLines counts the lines a change of a file added and removed, where
// its contents are text (a link's target is no text of lines).
func countLines(fr *log.File, before, after []byte) {
	switch {
	case fr.PreMode&index.TypeMask == index.TypeLink || fr.PostMode&index.TypeMask == index.TypeLink:
	case fr.Status == "M" && len(after) <= maxCounted && isText(after) && isText(before):
		a, r := diff.Count(before, after)
		fr.Added, fr.Removed = &a, &r
	case fr.Status == "A" && isText(after):
		n := text.LineCount(after)
		fr.Added = &n
	case fr.Status == "D" && isText(before):
		n := text.LineCount(before)
		fr.Removed = &n
	}
}
