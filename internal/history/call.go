package history

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/jobs"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
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

// setLast is written in place, not synced: after a crash of the machine,
// the next call may say "since" an earlier call.
func (h *history) setLast(tree string, n int64) {
	_ = replace.WriteLine(h.lastFile(tree), strconv.FormatInt(n, 10))
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
	files, err := c.changed(ctx, h, idx, view != nil, wrote)
	if err != nil {
		return nil, err
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
		c.overlapped(h, &r)
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

// changed is what the call changed: found by a scan against its view of
// the index (idx; whole: walk it all), or said by an undo or by wrote.
func (c *Call) changed(ctx context.Context, h *history, idx *index.Index, whole bool, wrote []outcome.Wrote) ([]log.File, error) {
	switch {
	case c.scan:
		_, files, _, err := h.scan(ctx, c.tree, idx, false, c.N, whole)
		return files, err
	case len(c.undone) > 0:
		return h.keepUndone(ctx, c.tree, c.undone, c.N)
	case len(wrote) > 0:
		return h.keepSaid(ctx, c.tree, idx, c.began, wrote, c.N)
	}
	return nil, nil
}

// overlapped names in r the calls that overlapped this one, and marks a
// file one of them said as said by it: its change, named here too.
func (c *Call) overlapped(h *history, r *log.Record) {
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
