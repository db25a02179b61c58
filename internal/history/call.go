package history

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"toolkit/internal/history/index"
	"toolkit/internal/history/log"

	"toolkit/internal/diff"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/root"
	"toolkit/internal/text"

	"golang.org/x/sys/unix"
)

// Call is one call's history, from Begin to End.
type Call struct {
	N     int64
	tree  string
	tool  string
	scan  bool
	s     Settings
	head  string
	began time.Time

	outside []log.File // found by the scan before the call
	since   int64      // the call on the tree before them
	jobs    []string   // the jobs that ran in the tree since it
	undid   []int64    // an undo's: the calls it took back
	undone  []undone   // an undo's: what it changed, read back

	// The tree's index as the scan before left it: End reads the file
	// again only if another call wrote it since.
	idx *index.Index
}

// Begin begins a call's history on tree (from Tree). With scan, the call's
// changes are found by scanning the tree before and after it (shell, job),
// and what changed since the last call is found now and kept apart;
// without, the call says what it changed (End's wrote). The first scan of
// a tree makes its index, and captures its baseline: in a background
// toolkit with the keeper, else here, before the call's command runs.
func Begin(ctx context.Context, tool, tree string, scan bool, s Settings) (*Call, error) {
	if s.Mode == Off || s.Mode == "" {
		return nil, errOff
	}
	h, err := open(s)
	if err != nil {
		return nil, err
	}
	defer h.close()
	n, err := h.nextCall()
	if err != nil {
		return nil, err
	}
	c := &Call{N: n, tree: tree, tool: tool, scan: scan, s: s, began: now(), head: gitHead(tree)}
	if err := log.Append(h.dir, log.Record{Call: n, Tree: tree, Tool: tool, Begin: &c.began}); err != nil {
		return nil, err
	}
	if err := log.MarkOpen(h.dir, n, tree); err != nil {
		return nil, err
	}
	running, interrupted := log.OpenCalls(h.dir, tree)
	if !scan && len(interrupted) == 0 {
		return c, nil
	}
	next, files, first, err := h.scan(ctx, tree, nil, true, n, false)
	if err != nil {
		return c, err
	}
	c.idx = next
	// Other calls running on the tree, or a write in flight (its history
	// waits for this lock): what changed is theirs, made while they ran,
	// said by each at its end.
	others := len(running) > 1 || h.writingNow()
	switch {
	case first:
		c.baseline(ctx, h)
	case len(interrupted) > 0:
		// A call killed before its end: what changed since is its.
		end := now()
		last := interrupted[len(interrupted)-1]
		for _, m := range interrupted {
			r := log.Record{Call: m, End: &end, Interrupted: true}
			if m == last {
				r.Files = files
			}
			_ = log.Append(h.dir, r)
			log.Closed(h.dir, m)
			h.dropView(tree, m)
		}
		h.setLast(tree, last)
	case len(files) > 0 && !others:
		c.outside, c.since = files, h.last(tree)
		c.jobs = jobsIn(tree, h.lastAt(tree))
	}
	return c, nil
}

// Said records a call of an applet that says what it wrote (write, edit,
// patch), once it has written, in one record: begun when the call began
// (began, before it wrote: the directories it made on the way are born
// after it) and ended now. It leaves no mark of a call in flight, as Begin
// does for End: a kill between the two would find nothing to give the
// call, which wrote before either. Where a call on the tree was cut short,
// it is closed first, as Begin closes it.
func Said(ctx context.Context, tool, tree string, s Settings, began time.Time, wrote []outcome.Wrote) (*outcome.Changes, error) {
	if s.Mode == Off || s.Mode == "" {
		return nil, errOff
	}
	h, err := open(s)
	if err != nil {
		return nil, err
	}
	running, interrupted := log.OpenCalls(h.dir, tree)
	if len(interrupted) > 0 {
		h.close()
		c, err := Begin(ctx, tool, tree, false, s)
		if err != nil {
			return nil, err
		}
		c.began = began
		return c.End(ctx, wrote)
	}
	defer h.close()
	n, err := h.nextCall()
	if err != nil {
		return nil, err
	}
	files, err := h.keepSaid(ctx, tree, nil, began, wrote, n)
	if err != nil {
		return nil, err
	}
	if err := h.syncStore(); err != nil {
		return nil, err
	}
	end := now()
	r := log.Record{Call: n, Tree: tree, Tool: tool, Begin: &began, End: &end, Files: files, During: running, Said: true}
	if err := log.Append(h.dir, r); err != nil {
		return nil, err
	}
	h.setLast(tree, n)
	return changesOf(r), nil
}

// wholeEvery: a call's first scan walks the whole tree when it was last
// walked whole longer ago than this, though its keeper watches it: what
// inotify never says (a write through mmap, a change through a hard link
// elsewhere) is found then, as a change made outside the calls.
var wholeEvery = time.Minute

// scan finds what changed in tree since its index (idx, or its file when
// idx is nil), and keeps the tree's next index: by asking the tree's
// keeper which directories changed and walking those, where one lives,
// else by walking the whole tree (and starting a keeper, where the host
// wants one). When the keeper saw nothing change, the index is not even
// read. first says the tree had no index (or none that could be read): it
// is made, and no change is said. before is the scan before a call's
// command.
func (h *history) scan(ctx context.Context, tree string, idx *index.Index, before bool, self int64, whole bool) (next *index.Index, files []log.File, first bool, err error) {
	if idx == nil {
		_, err := os.Lstat(h.indexPath(tree))
		first = err != nil
	}
	var only *dirty
	p := h.readWatchPoint(tree)
	point, asked := p, false
	if h.s.Keeper {
		var d *dirty
		d, point, asked = h.ask(tree, p)
		switch {
		case !asked:
			_ = h.startKeeper(tree)
		case first || whole || before && time.Since(p.Whole) > wholeEvery:
		case d != nil && d.empty():
			// Nothing changed since the index: it stands.
			return idx, nil, false, h.writeWatchPoint(tree, point)
		default:
			only = d
		}
	}
	if idx == nil {
		idx = h.readIndex(tree)
		first = idx.None
	}
	if only != nil {
		if first {
			only = nil
		} else {
			only.idx = idx
		}
	}
	next, files, err = h.rescan(ctx, tree, idx, first, only)
	if err != nil {
		return nil, nil, first, err
	}
	if err := h.keepIndex(tree, idx, next, self); err != nil {
		return nil, nil, first, err
	}
	if asked {
		if only == nil {
			point.Whole = now()
		}
		if err := h.writeWatchPoint(tree, point); err != nil {
			return nil, nil, first, err
		}
	}
	return next, files, first, nil
}

// readIndex is tree's index: an empty one (none) where there is none, or
// none that can be read (the tree is looked at anew).
func (h *history) readIndex(tree string) *index.Index {
	idx, err := index.Read(h.indexPath(tree))
	if err != nil {
		return &index.Index{None: true}
	}
	return idx
}

// keepIndex writes a tree's next index, unless it is the one it has: a
// scan that found the tree as it was writes nothing. The calls running on
// the tree but self keep their view of it first.
func (h *history) keepIndex(tree string, was, next *index.Index, self int64) error {
	if !was.None && slices.Equal(was.Entries, next.Entries) && was.V == index.VersionOf(h.indexPath(tree)) {
		next.V = was.V // the same files
		return nil
	}
	h.saveViews(tree, self)
	return next.Write(h.indexPath(tree))
}

// last is the call that last ended on tree; setLast says it.
func (h *history) last(tree string) int64 {
	b, _ := os.ReadFile(h.lastFile(tree))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// setLast is not synced: after a crash of the machine, the next call may
// say "since" an earlier call.
func (h *history) setLast(tree string, n int64) {
	_ = index.WriteFile(h.lastFile(tree), []byte(strconv.FormatInt(n, 10)+"\n"), false)
}

func (h *history) lastFile(tree string) string {
	return filepath.Join(h.dir, "trees", treeID(tree)+".last")
}

// lastAt is when the last call on tree ended (its mark's mtime); the zero
// time where none did.
func (h *history) lastAt(tree string) time.Time {
	fi, err := os.Stat(h.lastFile(tree))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// jobsIn are the jobs that ran in tree (their directory within it) at some
// moment since from: changes made outside the calls may be theirs.
func jobsIn(tree string, from time.Time) []string {
	all, err := jobs.List()
	if err != nil {
		return nil
	}
	var ids []string
	for _, j := range all {
		if j.Spec.Cwd == "" || !root.Within(j.Spec.Cwd, tree) {
			continue
		}
		if j.Running() || j.Status.Ended.After(from) {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// endAfterStop bounds what an End may take once its call was stopped (a
// SIGTERM, a cancel): the host that stopped it waits a moment, no more.
var endAfterStop = time.Second

// End ends the call's history: what it changed, found by a scan or said by
// wrote, kept and said. A call stopped before it ended (its context done:
// a signal, a cancel) is ended all the same, within endAfterStop, and
// marked interrupted.
func (c *Call) End(ctx context.Context, wrote []outcome.Wrote) (*outcome.Changes, error) {
	stopped := ctx.Err() != nil
	if stopped {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), endAfterStop)
		defer cancel()
	}
	if c.scan {
		waitWrites(ctx)
	}
	h, err := open(c.s)
	if err != nil {
		return nil, err
	}
	defer func() { h.close() }()
	defer log.Closed(h.dir, c.N)
	defer h.dropView(c.tree, c.N)
	idx, view := c.idx, h.view(c.tree, c.N)
	switch {
	case view != nil:
		idx = view // another call wrote the index since: this call's view of it
	case idx != nil && idx.V != index.VersionOf(h.indexPath(c.tree)):
		idx = nil // another wrote only what it captured
	}
	var files []log.File
	switch {
	case c.scan:
		if _, files, _, err = h.scan(ctx, c.tree, idx, false, c.N, view != nil); err != nil {
			return nil, err
		}
	case len(c.undone) > 0:
		if files, err = h.keepUndone(ctx, c.tree, c.undone, c.N); err != nil {
			return nil, err
		}
	case len(wrote) > 0:
		if files, err = h.keepSaid(ctx, c.tree, idx, c.began, wrote, c.N); err != nil {
			return nil, err
		}
	}
	overlapped := view != nil
	if c.scan && h.writingNow() {
		// A write, edit or patch in flight may have written what the scan
		// found: it says its files once it has the lock.
		if err := h.close(); err != nil {
			return nil, err
		}
		waitWrites(ctx)
		if h, err = open(c.s); err != nil {
			return nil, err
		}
		overlapped = true
	}
	running, _ := log.OpenCalls(h.dir, c.tree)
	end := now()
	r := log.Record{Call: c.N, End: &end, Files: files, Outside: c.outside, Since: c.since, Jobs: c.jobs, Git: moved(c.head, gitHead(c.tree)), Undid: c.undid, Interrupted: stopped, Said: !c.scan}
	for _, m := range running {
		if m != c.N {
			r.During = append(r.During, m)
		}
	}
	if overlapped || len(r.During) > 0 {
		// Calls overlapped this one: each is named, and a file one of them
		// said is its, named here as said by it.
		o := h.overlapping(c.tree, c.N, c.began)
		for _, m := range o.calls {
			if !slices.Contains(r.During, m) {
				r.During = append(r.During, m)
			}
		}
		slices.Sort(r.During)
		for i := range r.Files {
			f := &r.Files[i]
			if sb, ok := o.said[f.Path]; ok && sb.post == f.Post && c.scan {
				f.SaidBy = sb.call
			}
		}
	}
	if err := h.syncStore(); err != nil {
		return nil, err
	}
	if err := log.Append(h.dir, r); err != nil {
		return nil, err
	}
	h.setLast(c.tree, c.N)
	return changesOf(r), nil
}

// changesOf is what the model is told of a call's record.
func changesOf(r log.Record) *outcome.Changes {
	ch := &outcome.Changes{Call: r.Call, Files: changed(r.Files), During: r.During, Git: r.Git, Interrupted: r.Interrupted}
	if ch.Files == nil {
		ch.Files = []outcome.ChangedFile{}
	}
	if len(r.Outside) > 0 {
		ch.Outside = &outcome.Outside{Since: r.Since, Files: changed(r.Outside), Jobs: r.Jobs}
	}
	return ch
}

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
		return false, fmt.Sprintf("too large (%s; history keeps files of up to %s)", size(int64(len(content))), size(c.h.s.MaxFile))
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
		return fmt.Sprintf("too large (%s; history keeps files of up to %s)", size(e.Size), size(c.h.s.MaxFile))
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
		// index.Racy, and never hashed (a file of a big directory, one too large
		// to hash): no sha256 can confirm it, and its stat stands. It is
		// hashed now where it can be, for the comparisons after this one.
		if content, ok := s.content(c.r); ok && content != nil {
			e.Sum = hashOf(content)
		}
		return e, log.File{}, false
	}
	if e.IsDir() && old.IsDir() {
		if e.Flags&index.Heavy == 0 {
			if e.Mode == old.Mode {
				return e, log.File{}, false // its entries say what changed in it
			}
			// chmod of the directory itself: undo takes it back.
			return e, log.File{Path: e.Path, Status: "M", Dir: true, PreMode: old.Mode, PostMode: e.Mode}, true
		}
		fr := log.File{Path: e.Path, Status: "M", Dir: true, Heavy: true, Why: heavyWhy}
		return e, fr, !index.SameStat(old, &e)
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
	return e, fr, true
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
		fr := log.File{Path: rel}
		switch {
		case !w.Existed && !w.Exists:
			continue
		case !w.Existed:
			fr.Status = "A"
		case !w.Exists:
			fr.Status = "D"
		default:
			fr.Status = "M"
		}
		if old != nil {
			fr.PreMode = old.Mode
		}
		switch {
		case w.Existed && w.Before != nil:
			sum := hashOf(w.Before)
			fr.Pre = hex.EncodeToString(sum[:])
			fr.PreKept, fr.Why = cmp.keep(w.Before, sum)
		case w.Existed:
			fr.Why = fmt.Sprintf("too large (history keeps files of up to %s)", size(h.s.MaxFile))
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
		switch {
		case fr.PreMode&index.TypeMask == index.TypeLink || fr.PostMode&index.TypeMask == index.TypeLink:
			// A link's target is no text of lines.
		case fr.Status == "M" && len(w.After) <= maxCounted && isText(w.After) && isText(w.Before):
			a, r := diff.Count(w.Before, w.After)
			fr.Added, fr.Removed = &a, &r
		case fr.Status == "A" && isText(w.After):
			n := text.LineCount(w.After)
			fr.Added = &n
		case fr.Status == "D" && isText(w.Before):
			n := text.LineCount(w.Before)
			fr.Removed = &n
		}
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

// size words a count of bytes as read's pictures do: 900 bytes, 412 KB,
// 2.1 MB.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
