package history

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"toolkit/internal/diff"
	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/text"
)

// rescan walks tree and compares it with idx: the tree's next index, and
// what changed. first makes the index of a tree seen for the first time:
// no change is said then. With only, what the tree's keeper saw change,
// only the directories it names are walked.
func (h *history) rescan(ctx context.Context, tree string, idx *index.Index, first bool, only *dirty) (*index.Index, []log.File, error) {
	began := now()
	now, err := walkTree(ctx, tree, h.skip(tree), only)
	if err != nil {
		return idx, nil, err
	}
	markRacy(now, began)
	if only != nil {
		now = only.merge(now)
	}
	if len(now) > h.s.MaxTree {
		return idx, nil, fmt.Errorf("%s holds %d files, more than the %d history keeps the history of", tree, len(now), h.s.MaxTree)
	}
	next := &index.Index{Entries: make([]index.Entry, 0, len(now))}
	if first {
		// The files changed in the tick before: hashed now, or the next
		// scan, which hashes them again, could not tell them unchanged
		// before the baseline (the keeper's, in the background) has.
		r, err := os.OpenRoot(tree)
		if err != nil {
			return idx, nil, err
		}
		defer r.Close()
		for _, s := range now {
			if s.Flags&index.Racy != 0 && (s.IsLink() || s.IsReg() && s.Size <= maxHash) {
				s.Sum, _ = sumEntry(r, &s.Entry)
			}
			next.Entries = append(next.Entries, s.Entry)
		}
		return next, nil, nil
	}
	r, err := os.OpenRoot(tree)
	if err != nil {
		return idx, nil, err
	}
	defer r.Close()
	cmp := comparer{h: h, r: r, budget: budget{bytes: h.s.MaxCallBytes, files: h.s.MaxCallFiles}}
	var files []log.File
	// The added directories that gain BigDir files or more are one entry.
	big := bigDirs(idx, now, h.s.BigDir)
	i, j := 0, 0
	for i < len(idx.Entries) || j < len(now) {
		switch {
		case j == len(now) || i < len(idx.Entries) && idx.Entries[i].Path < now[j].Path:
			if fr, ok := cmp.gone(&idx.Entries[i]); ok {
				files = append(files, fr)
			}
			i++
		case i == len(idx.Entries) || now[j].Path < idx.Entries[i].Path:
			e, fr, ok := cmp.came(&now[j], big)
			next.Entries = append(next.Entries, e)
			if ok {
				files = append(files, fr)
			}
			j++
		case idx.Entries[i].Mode&index.TypeMask != now[j].Mode&index.TypeMask:
			// Another kind of thing under the same name (a file become a
			// directory): the one went, the other came.
			if fr, ok := cmp.gone(&idx.Entries[i]); ok {
				files = append(files, fr)
			}
			e, fr, ok := cmp.came(&now[j], big)
			next.Entries = append(next.Entries, e)
			if ok {
				files = append(files, fr)
			}
			i, j = i+1, j+1
		default:
			e, fr, ok := cmp.same(&idx.Entries[i], &now[j])
			next.Entries = append(next.Entries, e)
			if ok {
				files = append(files, fr)
			}
			i, j = i+1, j+1
		}
	}
	return next, collapse(files, big), nil
}

// skip is what a scan of tree leaves out: the state directory, should it
// be inside the tree.
func (h *history) skip(tree string) string {
	st := filepath.Dir(h.dir)
	if rel, err := filepath.Rel(tree, st); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
		return filepath.ToSlash(rel)
	}
	return ""
}

// budget is what a call may still keep.
type budget struct {
	bytes int64
	files int
}

// comparer compares a tree's entries before and after, keeping contents.
type comparer struct {
	h      *history
	r      *os.Root // the tree, which contents are read through
	budget budget
}

// keep stores content, within the host's bounds and the call's budget,
// and says why not where it does not.
func (c *comparer) keep(content []byte, sum [32]byte) (bool, string) {
	switch {
	case c.h.store == nil:
		return false, "history only reports (--history report)"
	case int64(len(content)) > c.h.s.MaxFile:
		return false, fmt.Sprintf("too large (%s; history keeps files of up to %s)", text.Bytes(int64(len(content))), text.Bytes(c.h.s.MaxFile))
	}
	if c.h.store.Has(sum) {
		return true, ""
	}
	if c.budget.files <= 0 || int64(len(content)) > c.budget.bytes {
		return false, "the call kept as much as it may (--history-max-call)"
	}
	if err := c.h.store.Put(content, sum); err != nil {
		return false, "the store could not keep it: " + err.Error()
	}
	c.budget.files--
	c.budget.bytes -= int64(len(content))
	return true, ""
}

// gone is a path that is no longer there.
func (c *comparer) gone(old *index.Entry) (log.File, bool) {
	fr := log.File{Path: old.Path, Status: "D", Dir: old.IsDir(), Heavy: old.Flags&index.Heavy != 0, PreMode: old.Mode, Bytes: old.Size}
	if fr.Heavy {
		fr.Why = heavyWhy
	}
	if old.Sum != ([32]byte{}) {
		fr.Pre = hex.EncodeToString(old.Sum[:])
		fr.PreKept = old.Flags&index.Stored != 0 && c.h.store != nil && c.h.store.Has(old.Sum)
	}
	if !fr.Dir && !fr.PreKept {
		fr.Why = c.notKept(old)
	}
	if fr.PreKept && old.IsReg() {
		if pre, err := c.h.store.Get(old.Sum); err == nil && isText(pre) {
			n := text.LineCount(pre)
			fr.Removed = &n
		}
	}
	return fr, true
}

// heavyWhy is why a heavy directory's change cannot be taken back.
const heavyWhy = "a heavy directory, its contents are not kept"

// notKept says why the content an entry had is not kept.
func (c *comparer) notKept(e *index.Entry) string {
	switch {
	case c.h.store == nil:
		return "history only reports (--history report)"
	case e.IsReg() && e.Size > c.h.s.MaxFile:
		return fmt.Sprintf("too large (%s; history keeps files of up to %s)", text.Bytes(e.Size), text.Bytes(c.h.s.MaxFile))
	case e.Flags&index.Heavy != 0:
		return heavyWhy
	case e.Flags&index.Stored != 0:
		return noLongerKept
	}
	return "its content before was not captured yet"
}

// came is a path that was not there: its entry, and its record.
func (c *comparer) came(s *seen, big map[string]int) (index.Entry, log.File, bool) {
	e := s.Entry
	fr := log.File{Path: e.Path, Status: "A", Dir: e.IsDir(), Heavy: e.Flags&index.Heavy != 0, PostMode: e.Mode, Bytes: e.Size}
	if fr.Heavy {
		fr.Why = heavyWhy
	}
	if e.IsDir() || topOf(e.Path, big) != "" {
		return e, fr, true
	}
	content, ok := s.content(c.r)
	if !ok {
		return e, fr, true
	}
	if content != nil {
		e.Sum = hashOf(content)
		fr.Post = hex.EncodeToString(e.Sum[:])
		if kept, _ := c.keep(content, e.Sum); kept {
			e.Flags |= index.Stored
			fr.PostKept = true
		}
		if e.IsReg() && isText(content) {
			n := text.LineCount(content)
			fr.Added = &n
		}
	}
	return e, fr, true
}

// same is a path there before and after: unchanged when its stat is (and
// it was not racy), or when its content and mode are.
func (c *comparer) same(old *index.Entry, s *seen) (index.Entry, log.File, bool) {
	e := s.Entry
	if index.SameStat(old, &e) && old.Flags&index.Racy == 0 {
		e.Sum, e.Flags = old.Sum, e.Flags&^index.Stored|old.Flags&index.Stored
		return e, log.File{}, false
	}
	if index.SameStat(old, &e) && !old.IsDir() && (old.Sum == [32]byte{} || s.IsReg() && s.Size > maxHash) {
		// Racy, and never hashed (a file of a big directory, one too large
		// to hash): no sha256 can confirm it, and its stat stands. It is
		// hashed now where it can be, for the comparisons after this one.
		if content, ok := s.content(c.r); ok && content != nil {
			e.Sum = hashOf(content)
		}
		return e, log.File{}, false
	}
	if e.IsDir() && old.IsDir() {
		fr, ok := sameDir(old, &e)
		return e, fr, ok
	}
	content, ok := s.content(c.r)
	if !ok {
		// Changed again while it was read: the next scan looks at it.
		e.Flags |= index.Racy
		e.Sum, e.Flags = old.Sum, e.Flags|old.Flags&index.Stored
		return e, log.File{}, false
	}
	if content != nil {
		e.Sum = hashOf(content)
	}
	if content != nil && e.Sum == old.Sum && e.Mode == old.Mode {
		e.Flags |= old.Flags & index.Stored
		return e, log.File{}, false
	}
	return e, c.modified(old, &e, content), true
}

// sameDir is a directory there before and after: a change of its own mode
// (a chmod, which undo takes back), or of a heavy one's stat; else its
// entries say what changed in it.
func sameDir(old, e *index.Entry) (log.File, bool) {
	if e.Flags&index.Heavy != 0 {
		return log.File{Path: e.Path, Status: "M", Dir: true, Heavy: true, Why: heavyWhy}, !index.SameStat(old, e)
	}
	if e.Mode == old.Mode {
		return log.File{}, false
	}
	return log.File{Path: e.Path, Status: "M", Dir: true, PreMode: old.Mode, PostMode: e.Mode}, true
}

// modified is the record of a path whose content or mode changed: its
// content before and after, each kept where it may be, and its lines
// added and removed. e is its entry now, marked Stored where kept.
func (c *comparer) modified(old, e *index.Entry, content []byte) log.File {
	fr := log.File{Path: e.Path, Status: "M", PreMode: old.Mode, PostMode: e.Mode, Bytes: e.Size}
	if old.Sum != ([32]byte{}) {
		fr.Pre = hex.EncodeToString(old.Sum[:])
		fr.PreKept = old.Flags&index.Stored != 0 && c.h.store != nil && c.h.store.Has(old.Sum)
	}
	if !fr.PreKept {
		fr.Why = c.notKept(old)
	}
	if content != nil {
		fr.Post = hex.EncodeToString(e.Sum[:])
		if kept, _ := c.keep(content, e.Sum); kept {
			e.Flags |= index.Stored
			fr.PostKept = true
		}
		if fr.PreKept && e.IsReg() && len(content) <= maxCounted && isText(content) {
			if pre, err := c.h.store.Get(old.Sum); err == nil && isText(pre) {
				a, r := diff.Count(pre, content)
				fr.Added, fr.Removed = &a, &r
			}
		}
	}
	return fr
}

// maxCounted is the largest file whose changed lines are counted.
const maxCounted = 1 << 20

// bigDirs are the directories added since idx that hold bigDir new files
// or more, by their path (the topmost of them), with their count.
func bigDirs(idx *index.Index, now []seen, bigDir int) map[string]int {
	added := map[string]bool{} // the topmost added directories
	counts := map[string]int{}
	i := 0 // both sorted: the index's entries are passed along
	for _, s := range now {
		for i < len(idx.Entries) && idx.Entries[i].Path < s.Path {
			i++
		}
		if i < len(idx.Entries) && idx.Entries[i].Path == s.Path {
			continue
		}
		d := topOf(s.Path, added)
		switch {
		case s.IsDir() && d == "":
			added[s.Path] = true
		case !s.IsDir() && d != "":
			counts[d]++
		}
	}
	big := map[string]int{}
	for d, n := range counts {
		if n >= bigDir {
			big[d] = n
		}
	}
	return big
}

// topOf is the topmost directory of dirs that p is under, or "": a look
// at each of p's parents, whatever the number of dirs.
func topOf[V any](p string, dirs map[string]V) string {
	top := ""
	for d := parentOf(p); d != ""; d = parentOf(d) {
		if _, ok := dirs[d]; ok {
			top = d
		}
	}
	return top
}

// collapse makes each big directory's records one: "A build/ (12,345
// files, 180 MB, not kept)".
func collapse(files []log.File, big map[string]int) []log.File {
	if len(big) == 0 {
		return files
	}
	var out []log.File
	bytes := map[string]int64{}
	for _, f := range files {
		if d := topOf(f.Path, big); d != "" {
			bytes[d] += f.Bytes
			continue
		}
		out = append(out, f)
	}
	for i := range out {
		if n, ok := big[out[i].Path]; ok {
			out[i].Files, out[i].Bytes = n, bytes[out[i].Path]
			out[i].Why = fmt.Sprintf("a directory of %d new files is not kept", n)
		}
	}
	return out
}
