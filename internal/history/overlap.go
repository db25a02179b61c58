package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/proc"
	"toolkit/internal/replace"
	"toolkit/internal/state"
	"toolkit/internal/tempfile"
)

// Calls that overlap on one tree (a model turn's tool calls, sent at once)
// share its index, which each scan moves on. A scanned call finds its
// changes against the index as its own first scan left it (its view), so
// that a call that writes the index in the meantime (another's first scan,
// another's end, a write) does not take a change from it: before any such
// write, the index as it stands is kept for each call running on the tree
// that has no view kept yet (trees/ID.view-N, a hard link to the index
// file, and a copy of its delta). What a call finds while others run is
// theirs as much as its own: never "outside calls", said as during them;
// a file a write, edit or patch said in the meantime is that call's, and
// is named as said by it.

// viewPath is where call n's view of tree's index is kept.
func (h *history) viewPath(tree string, n int64) string {
	return filepath.Join(h.dir, "trees", treeID(tree)+".view-"+strconv.FormatInt(n, 10))
}

// saveViews keeps the index of tree as it stands for each call running on
// it but self that has none kept: the index is about to be written.
func (h *history) saveViews(tree string, self int64) {
	running, _ := log.OpenCalls(h.dir, tree)
	path := h.indexPath(tree)
	for _, n := range running {
		if n == self {
			continue
		}
		view := h.viewPath(tree, n)
		if _, err := os.Lstat(view); err == nil {
			continue
		}
		if os.Link(path, view) != nil {
			continue // no index yet: its first scan makes it
		}
		if b, err := os.ReadFile(index.DeltaPath(path)); err == nil {
			_ = replace.WriteFile(index.DeltaPath(view), b, false)
		}
	}
}

// view is call n's view of tree's index, where one was kept; nil where
// the index stands as the call's first scan left it.
func (h *history) view(tree string, n int64) *index.Index {
	idx, err := index.Read(h.viewPath(tree, n))
	if err != nil || idx.None {
		return nil
	}
	return idx
}

// dropView removes call n's view.
func (h *history) dropView(tree string, n int64) {
	view := h.viewPath(tree, n)
	os.Remove(view)
	os.Remove(index.DeltaPath(view))
}

// writing is a write, edit or patch in flight: open/said-PID-RANDOM, made
// before the applet runs and removed once history is told, so that a scan
// meanwhile knows its change is a call's, not one made outside calls.
type writing struct{ path string }

// Writing marks a write, edit or patch in flight in the state directory,
// for history s: done removes the mark. Where history is off, or the mark
// cannot be made, it marks nothing.
func Writing(s Settings) (done func()) {
	if s.Mode == Off || s.Mode == "" {
		return func() {}
	}
	st, err := stateDir()
	if err != nil {
		return func() {}
	}
	dir := filepath.Join(st, "open")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}
	}
	self, _ := proc.Lookup(os.Getpid())
	b, _ := json.Marshal(log.OpenCall{Pid: os.Getpid(), Started: self.Start})
	w := writing{path: filepath.Join(dir, tempfile.Name("said-", ""))}
	if os.WriteFile(w.path, b, 0o600) != nil {
		return func() {}
	}
	return func() { os.Remove(w.path) }
}

// writingNow says whether a write, edit or patch is in flight in the
// state directory (on any tree: its tree is known once it has written);
// the marks of toolkits that died are removed.
func (h *history) writingNow() bool {
	names, _ := os.ReadDir(filepath.Join(h.dir, "open"))
	now := false
	for _, e := range names {
		if !strings.HasPrefix(e.Name(), "said-") {
			continue
		}
		p := filepath.Join(h.dir, "open", e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone: its write said what it wrote
		}
		var oc log.OpenCall
		b, err := os.ReadFile(p)
		switch {
		case err == nil && json.Unmarshal(b, &oc) == nil && proc.StillAlive(oc.Pid, oc.Started):
			now = true
		case time.Since(fi.ModTime()) < time.Second:
			now = true // being made, or its toolkit just died: in flight still
		default:
			os.Remove(p)
		}
	}
	return now
}

// overlap is what the log says of the calls on a tree that overlapped one
// call: their numbers, and the files the writes, edits and patches among
// them said (by path: the call, and the sha256 it left).
type overlap struct {
	calls []int64
	said  map[string]saidBy
}

type saidBy struct {
	call int64
	post string
}

// overlapping reads the log for the calls on tree, other than self, whose
// time overlapped [began, end].
func (h *history) overlapping(tree string, self int64, began time.Time) overlap {
	o := overlap{said: map[string]saidBy{}}
	byN, order, err := h.calls()
	if err != nil {
		return o
	}
	for _, n := range order {
		c := byN[n]
		if n == self || c.tree != tree || !c.ended || c.endedAt.Before(began) {
			continue
		}
		o.calls = append(o.calls, n)
		if c.said {
			for _, f := range c.files() {
				o.said[f.Path] = saidBy{call: n, post: f.Post}
			}
		}
	}
	return o
}

// stateDir is the state directory's history/.
func stateDir() (string, error) {
	st, err := state.Dir("history")
	if err != nil {
		return "", err
	}
	return filepath.Join(st, "history"), nil
}

// writesWait bounds how long a scanned call's end waits for the writes,
// edits and patches in flight to say what they wrote: a scan that found
// their files before they did would take them for its own.
var writesWait = 200 * time.Millisecond

// waitWrites waits, at most writesWait, until no write, edit or patch is
// in flight in the state directory.
func waitWrites(ctx context.Context) {
	dir, err := stateDir()
	if err != nil {
		return
	}
	h := &history{dir: dir} // read only: no lock
	deadline := time.Now().Add(writesWait)
	for h.writingNow() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
}
