package history

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
	"toolkit/internal/text"
)

// UndoArgs say what to take back: one call (Call), or every call from To
// on, the later first; DryRun says the plan and does nothing; Force
// restores a path whatever it holds now.
type UndoArgs struct {
	Call, To int64
	DryRun   bool
	Force    bool
	// Within, when set, is the root the calls' tree must lie in (--root).
	Within string
}

// UndoResult is what an undo did (or would do), path by path.
type UndoResult struct {
	Calls       []int64    `json:"calls"`
	Restored    []UndoStep `json:"restored"`
	Conflicts   []UndoStep `json:"conflicts"`
	NotKept     []UndoStep `json:"not_restorable"`
	DryRun      bool       `json:"dry_run"`
	Forced      bool       `json:"forced,omitempty"`
	NothingToDo bool       `json:"nothing_to_do,omitempty"`
}

// UndoStep is one path of an undo.
type UndoStep struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "restore", "remove", "recreate"
	Why    string `json:"why,omitempty"`
}

// step is a path's plan: what it must hold now (its latest call's after,
// "" and absent for none), and what it gets back.
type step struct {
	path      string
	nowSum    string // what it must hold now; "" with nowAbsent for no file
	nowAbsent bool
	nowMode   uint32 // its type and permissions; 0 where not recorded
	toSum     string // what it gets back; "" with toAbsent: removed
	toAbsent  bool
	toMode    uint32
	kept      bool // toSum's content is kept
	why       string
	latest    int64 // the call that last changed it
}

// UndoCalls takes back what a call changed (a.Call), or every call from a.To
// on, the later first, all of it or none, through replace.CommitAll's
// journal. A path whose content is not what the latest call left is a
// conflict, left as it is unless a.Force. The undo is a call of its own,
// recorded as any other: undoing it is a redo.
func UndoCalls(ctx context.Context, a UndoArgs, s Settings) (UndoResult, *outcome.Changes, error) {
	res := UndoResult{DryRun: a.DryRun, Forced: a.Force}
	s.Mode = Undo
	h, err := open(s)
	if err != nil {
		return res, nil, err
	}
	byN, order, err := h.calls()
	if err != nil {
		h.close()
		return res, nil, err
	}
	first := a.Call
	if a.To > 0 {
		first = a.To
	}
	start := byN[first]
	if start == nil {
		h.close()
		return res, nil, fmt.Errorf("no call %d in this state directory's history", first)
	}
	if !start.ended {
		h.close()
		return res, nil, fmt.Errorf("call %d has not ended", first)
	}
	tree := start.tree
	if a.Within != "" && !root.Within(tree, a.Within) {
		h.close()
		return res, nil, fmt.Errorf("call %d changed %s, outside the root", first, tree)
	}
	var calls []*callState
	for _, n := range order {
		c := byN[n]
		if c.tree != tree || !c.ended {
			continue
		}
		if n == first || a.To > 0 && n > first {
			calls = append(calls, c)
		}
	}
	steps := plan(calls)
	// Later calls that changed a path after the one undone make it a
	// conflict: named in the answer.
	later := map[string]int64{}
	for _, n := range order {
		if c := byN[n]; c.tree == tree && c.ended && n > first {
			for _, f := range c.files() {
				later[f.Path] = n
			}
		}
	}
	for _, c := range calls {
		res.Calls = append(res.Calls, c.n)
	}
	r, err := root.Open(tree)
	if err != nil {
		h.close()
		return res, nil, err
	}
	defer r.Close()
	nows, contents := onDiskAll(r, steps), h.contentsOf(steps)
	var changes []replace.Change
	var wrote []outcome.Wrote
	for i, st := range steps {
		cur, curSum, curMode, there := nows[i].b, nows[i].sum, nows[i].mode, nows[i].there
		us := UndoStep{Path: st.path}
		switch {
		case st.toAbsent:
			us.Action = "remove"
		case !there:
			us.Action = "recreate"
		default:
			us.Action = "restore"
		}
		switch {
		case !st.toAbsent && !st.kept:
			us.Why = st.why
			if us.Why == "" {
				us.Why = "its content before is not kept"
			}
			res.NotKept = append(res.NotKept, us)
			continue
		case st.toAbsent && !there, !st.toAbsent && there && curSum == st.toSum && curMode == st.toMode&modeMask:
			continue // already as it was
		case !a.Force && !st.nowAbsent && there && st.nowSum == "":
			us.Why = "what the call left is not known (too large to hash), so a change since cannot be told"
			res.Conflicts = append(res.Conflicts, us)
			continue
		case !a.Force && (st.nowAbsent && there || !st.nowAbsent && (!there || curSum != st.nowSum || st.nowMode != 0 && curMode&typeMask != st.nowMode&typeMask)):
			us.Why = "changed since"
			if n := later[st.path]; n > 0 && a.To == 0 {
				us.Why += fmt.Sprintf(" (call %d)", n)
			} else {
				us.Why += ", outside calls"
			}
			res.Conflicts = append(res.Conflicts, us)
			continue
		}
		ch := replace.Change{Path: st.path, Target: st.path}
		if there {
			ch.Expect = replace.Expect{SHA256: curSum}
		} else {
			ch.Expect = replace.Expect{Absent: true}
		}
		w := outcome.Wrote{Path: filepath.Join(tree, st.path), Before: cur, Existed: there}
		if !st.toAbsent {
			content, ok := contents[st.toSum]
			if !ok {
				us.Why = "its kept content does not read back (the store is corrupt)"
				res.NotKept = append(res.NotKept, us)
				continue
			}
			ch.Content = content
			if ch.Content == nil {
				ch.Content = []byte{}
			}
			ch.Link = st.toMode&typeMask == typeLink
			ch.Like = replace.Like{Mode: fileMode(st.toMode)}
			w.After, w.Exists = content, true
		}
		changes = append(changes, ch)
		wrote = append(wrote, w)
		res.Restored = append(res.Restored, us)
	}
	res.NothingToDo = len(changes) == 0
	h.close()
	if a.DryRun || len(changes) == 0 {
		return res, nil, nil
	}
	// The undo is a call: begun before it changes anything, ended with
	// what it wrote.
	c, err := Begin(ctx, "undo", tree, false, s)
	if err != nil {
		return res, nil, err
	}
	if err := replace.CommitAll(r, append(changes, emptyDirs(calls)...)); err != nil {
		_, _ = c.End(ctx, nil)
		return res, nil, err
	}
	ch, err := c.endUndo(ctx, wrote, res.Calls)
	return res, ch, err
}

// onDisk is a path as it is now: its bytes (a link's target), their
// sha256 in hex, its mode, and whether it is there.
type onDisk struct {
	b     []byte
	sum   string
	mode  uint32
	there bool
}

// onDiskAll is each step's path as it is now, read and hashed side by
// side: an undo of 1,000 files reads and hashes each.
func onDiskAll(r *root.Root, steps []step) []onDisk {
	nows := make([]onDisk, len(steps))
	sideBySide(len(steps), func() func(int) {
		return func(i int) {
			d := &nows[i]
			d.b, d.sum, d.mode, d.there = current(r, steps[i].path)
		}
	})
	return nows
}

// contentsOf is the contents the steps give back, by their sha256 in hex,
// read back and checked (store.getAll); one that does not read back is
// not there.
func (h *history) contentsOf(steps []step) map[string][]byte {
	var want [][32]byte
	var hexes []string
	seen := map[string]bool{}
	for _, st := range steps {
		if sum, ok := parseSum(st.toSum); ok && !st.toAbsent && st.kept && !seen[st.toSum] {
			seen[st.toSum] = true
			want, hexes = append(want, sum), append(hexes, st.toSum)
		}
	}
	out := map[string][]byte{}
	if h.store == nil {
		return out
	}
	got, errs := h.store.getAll(want)
	for i, b := range got {
		if errs[i] == nil {
			out[hexes[i]] = b
		}
	}
	return out
}

// plan is, for each path the calls changed, what it must hold now and
// what it gets back: what it held before the first of them that changed
// it. The calls are in order, oldest first.
func plan(calls []*callState) []step {
	by := map[string]*step{}
	var paths []string
	for _, c := range calls {
		for _, f := range c.files() {
			if f.Dir {
				continue
			}
			st := by[f.Path]
			if st == nil {
				st = &step{path: f.Path, toSum: f.Pre, toAbsent: f.Status == "A", toMode: f.PreMode, kept: f.PreKept, why: f.Why}
				by[f.Path] = st
				paths = append(paths, f.Path)
			}
			st.nowSum, st.nowAbsent, st.nowMode, st.latest = f.Post, f.Status == "D", f.PostMode, c.n
		}
	}
	slices.Sort(paths)
	out := make([]step, 0, len(paths))
	for _, p := range paths {
		out = append(out, *by[p])
	}
	return out
}

// current is what path holds now, not followed: a regular file's bytes or
// a symbolic link's target, their sha256, its type and permissions
// (modeMask), and whether anything is there.
func current(r *root.Root, path string) ([]byte, string, uint32, bool) {
	fi, err := r.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", 0, false
	}
	if err != nil {
		return nil, "", 0, true
	}
	var mode uint32
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		mode = st.Mode & modeMask
	}
	var b []byte
	if fi.Mode()&fs.ModeSymlink != 0 {
		dest, err := r.Readlink(path)
		if err != nil {
			return nil, "", mode, true
		}
		b = []byte(dest)
	} else if b, err = replace.ReadWhole(r, path); err != nil {
		return nil, "", mode, true
	}
	sum := hashOf(b)
	return b, hex.EncodeToString(sum[:]), mode, true
}

// fileMode is a st_mode's permissions, setuid, setgid and sticky bits, as
// os has them.
func fileMode(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}

// modeMask keeps a mode's type and permissions.
const modeMask = typeMask | 0o7777

// emptyDirs are the changes that remove the directories the calls made,
// the deepest first: each goes once the files are restored, if it is
// empty then.
func emptyDirs(calls []*callState) []replace.Change {
	var dirs []string
	for _, c := range calls {
		for _, f := range c.files() {
			if f.Dir && f.Status == "A" && !f.Heavy {
				dirs = append(dirs, f.Path)
			}
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var out []replace.Change
	for _, d := range dirs {
		out = append(out, replace.Change{Path: d, Target: d, RemoveDir: true})
	}
	return out
}

// endUndo ends an undo's call: what it wrote, and which calls it undid.
func (c *Call) endUndo(ctx context.Context, wrote []outcome.Wrote, undid []int64) (*outcome.Changes, error) {
	c.undid = undid
	return c.End(ctx, wrote)
}

// Said is an undo's answer: "[undone: call 17 — 3 files restored; 1
// conflict: src/a.go changed since (call 19)]".
func (u UndoResult) Said() string {
	var b strings.Builder
	what := "call " + fmt.Sprint(u.Calls[0])
	if len(u.Calls) > 1 {
		what = fmt.Sprintf("calls %d-%d", u.Calls[0], u.Calls[len(u.Calls)-1])
	}
	verb := "undone"
	if u.DryRun {
		verb = "would undo"
	}
	for _, st := range u.Restored {
		fmt.Fprintf(&b, "%s %s\n", st.Action, text.Escape(st.Path))
	}
	fmt.Fprintf(&b, "[%s: %s — %s %s", verb, what, text.Count(int64(len(u.Restored)), "file"), map[bool]string{true: "to restore", false: "restored"}[u.DryRun])
	if u.NothingToDo && len(u.Conflicts) == 0 && len(u.NotKept) == 0 {
		b.WriteString(": the tree is as it was before")
	}
	if n := len(u.Conflicts); n > 0 {
		var names []string
		for _, c := range u.Conflicts[:min(n, 5)] {
			names = append(names, text.Escape(c.Path)+" "+c.Why)
		}
		fmt.Fprintf(&b, "; %s: %s", text.Count(int64(n), "conflict"), strings.Join(names, ", "))
		if !u.Forced {
			b.WriteString(" (left as it is; force to restore it all the same)")
		}
	}
	if n := len(u.NotKept); n > 0 {
		var names []string
		for _, c := range u.NotKept[:min(n, 5)] {
			names = append(names, text.Escape(c.Path)+" ("+c.Why+")")
		}
		fmt.Fprintf(&b, "; not restorable: %s", strings.Join(names, ", "))
	}
	if u.Forced {
		b.WriteString("; forced")
	}
	b.WriteString("]\n")
	return b.String()
}
