package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"toolkit/internal/history/index"
	"toolkit/internal/history/log"
	"toolkit/internal/history/pack"
	"toolkit/internal/outcome"
	"toolkit/internal/replace"
	"toolkit/internal/root"
)

// UndoArgs say what to take back: one call (Call), or every call from To
// on, the later first; DryRun says the plan and does nothing; Force
// restores a path whatever it holds now.
type UndoArgs struct {
	Call, To int64
	// Path, instead, takes back one file's last change: of the last call
	// that changed it, that file only. A host path.
	Path   string
	DryRun bool
	Force  bool
	// Within, when set, is the root the calls' tree must lie in (--root).
	Within string
}

// UndoResult is what an undo did (or would do), path by path.
type UndoResult struct {
	Calls     []int64    `json:"calls"`
	Restored  []UndoStep `json:"restored"`
	Conflicts []UndoStep `json:"conflicts"`
	NotKept   []UndoStep `json:"not_restorable"`
	// Left are the paths the undo changed that do not read back as they
	// were: a directory a call made that holds files no call made, say.
	Left []UndoStep `json:"left,omitempty"`
	// Git says a HEAD that a call undone moved, which undo leaves where
	// it is: it restores files.
	Git         string `json:"git,omitempty"`
	DryRun      bool   `json:"dry_run"`
	Forced      bool   `json:"forced,omitempty"`
	NothingToDo bool   `json:"nothing_to_do,omitempty"`
}

// UndoStep is one path of an undo.
type UndoStep struct {
	Path   string `json:"path"`
	Dir    bool   `json:"dir,omitempty"` // the path is (or was) a directory
	Action string `json:"action"`        // "restore", "remove", "recreate"
	Why    string `json:"why,omitempty"`
}

// UndoCalls takes back what a call changed (a.Call), or every call from a.To
// on, the later first, all of it or none, through replace.CommitAll's
// journal: it loads the calls and what each path must hold now and gets
// back (load), looks at each path as it is and sorts it into what is
// restored, a conflict or not restorable (classify), then commits, reads
// back what it did, and records the undo as a call of its own: undoing it
// is a redo. A path whose content is not what the latest call left is a
// conflict, left as it is unless a.Force.
func UndoCalls(ctx context.Context, a UndoArgs, s Settings) (UndoResult, *outcome.Changes, error) {
	res := UndoResult{DryRun: a.DryRun, Forced: a.Force}
	s.Mode = Undo
	h, err := open(s)
	if err != nil {
		return res, nil, err
	}
	p, err := h.load(a)
	if err != nil {
		h.close()
		return res, nil, err
	}
	res.Calls = p.calls
	if p.headBy > 0 {
		res.Git = fmt.Sprintf("HEAD stays at %s (moved by call %d); undo restores files, not HEAD", gitHead(p.tree), p.headBy)
	}
	r, err := root.Open(p.tree)
	if err != nil {
		h.close()
		return res, nil, err
	}
	defer r.Close()
	look := newLooker(r, s.MaxFile)
	defer look.close()
	todo := p.classify(look, h, a, &res)
	h.close()
	res.NothingToDo = len(todo) == 0
	if a.DryRun || len(todo) == 0 {
		return res, nil, nil
	}
	// The undo is a call: begun before it changes anything, ended with
	// what it did, read back.
	c, err := Begin(ctx, "undo", p.tree, false, s)
	if err != nil {
		return res, nil, err
	}
	changes := make([]replace.Change, len(todo))
	for i, t := range todo {
		changes[i] = t.change
	}
	if err := replace.CommitAll(r, changes); err != nil {
		res.Restored = nil
		_, _ = c.End(ctx, nil)
		return res, nil, err
	}
	c.undone, c.undid = p.readBack(look, todo, &res), p.calls
	ch, err := c.End(ctx, nil)
	return res, ch, err
}

// kind is what a path holds.
type kind uint8

const (
	absent kind = iota
	regular
	symlink
	directory
)

func (k kind) String() string {
	return [...]string{"nothing", "file", "link", "directory"}[k]
}

// kindOf is the kind of a st_mode.
func kindOf(mode uint32) kind {
	switch mode & index.TypeMask {
	case 0:
		return absent
	case index.TypeDir:
		return directory
	case index.TypeLink:
		return symlink
	}
	return regular
}

// pathState is what a path holds, as the log says it or as it is now.
type pathState struct {
	kind kind
	sum  string // a file's or a link's content, sha256 in hex; "" where not known
	mode uint32 // st_mode, its type and permissions; 0 where not known
	kept bool   // the content is in the store
	why  string // why it is not
	size int64
}

// before is what a record says the path held before its call.
func before(f log.File) pathState {
	if f.Status == "A" {
		return pathState{}
	}
	return pathState{kind: recordKind(f.PreMode, f.Dir), sum: f.Pre, mode: f.PreMode, kept: f.PreKept || f.Dir, why: f.Why, size: f.Bytes}
}

// after is what a record says the path held after its call.
func after(f log.File) pathState {
	if f.Status == "D" {
		return pathState{}
	}
	return pathState{kind: recordKind(f.PostMode, f.Dir), sum: f.Post, mode: f.PostMode, kept: f.PostKept, size: f.Bytes}
}

// recordKind is the kind a record's mode says (a regular file where it
// was not recorded).
func recordKind(mode uint32, dir bool) kind {
	switch {
	case mode != 0:
		return kindOf(mode)
	case dir:
		return directory
	}
	return regular
}

// undoPlan is what an undo is about: its calls (oldest first) and tree,
// and for each path they changed what it must hold now and what it gets
// back.
type undoPlan struct {
	tree  string
	calls []int64
	paths []*pathPlan // sorted by path
	later map[string]int64
	// outside is, for each path a change outside calls touched after
	// the first call, the call whose record says it.
	outside map[string]int64
	to      bool
	// headBy is the last of the calls that moved git's HEAD.
	headBy int64
	by     map[string]*pathPlan
}

// pathPlan is one path's part of an undo.
type pathPlan struct {
	path    string
	now, to pathState // what the latest call left; what it held before the first
	latest  int64
	// stat is the tree's index entry for a file no scan could hash (over
	// maxHash), where it has one: its stat stands for its content.
	stat *index.Entry
	// notRestorable says why the path cannot be taken back whatever it
	// holds: a heavy or big directory, whose files are not kept.
	notRestorable string
}

// load reads the log: the calls to undo, on their tree, and each path's
// plan.
func (h *history) load(a UndoArgs) (*undoPlan, error) {
	byN, order, err := h.calls()
	if err != nil {
		return nil, err
	}
	first := a.Call
	if a.To > 0 {
		first = a.To
	}
	only := ""
	if a.Path != "" {
		if first, only, err = lastChangeOf(a.Path, a.Within, byN, order); err != nil {
			return nil, err
		}
	}
	start := byN[first]
	switch {
	case start == nil:
		return nil, fmt.Errorf("no call %d in this state directory's history", first)
	case !start.ended:
		return nil, fmt.Errorf("call %d has not ended", first)
	case a.Within != "" && !root.Within(start.tree, a.Within):
		return nil, fmt.Errorf("call %d changed %s, outside the root", first, start.tree)
	}
	p := &undoPlan{tree: start.tree, later: map[string]int64{}, outside: map[string]int64{}, to: a.To > 0, by: map[string]*pathPlan{}}
	for _, n := range order {
		c := byN[n]
		if c.tree == p.tree && n > first {
			for _, f := range c.outside() {
				p.outside[f.Path] = n
			}
		}
		switch {
		case c.tree != p.tree || !c.ended || n < first:
		case n > first && a.To == 0:
			// Later calls that changed a path make it a conflict: named.
			for _, f := range c.files() {
				if f.SaidBy == 0 {
					p.later[f.Path] = n
				}
			}
		default:
			p.add(c, only)
		}
	}
	for _, pp := range p.by {
		p.paths = append(p.paths, pp)
	}
	slices.SortFunc(p.paths, func(a, b *pathPlan) int { return strings.Compare(a.path, b.path) })
	return p, nil
}

// add adds a call undone to the plan, the calls oldest first: each path's
// state before the first of them, and after the last. A path may have two
// records in a call: gone, and come as another kind of thing (a file
// become a directory). only, where set, is the one path undone.
func (p *undoPlan) add(c *callState, only string) {
	p.calls = append(p.calls, c.n)
	if c.git != "" {
		p.headBy = c.n
	}
	bef, aft := map[string]pathState{}, map[string]pathState{}
	var paths []string
	for _, f := range c.files() {
		if f.SaidBy != 0 || only != "" && f.Path != only {
			continue // another call's change, undone by its undo; or not the file asked for
		}
		_, b := bef[f.Path]
		_, a := aft[f.Path]
		if !b && !a {
			paths = append(paths, f.Path)
		}
		if f.Status != "A" {
			bef[f.Path] = before(f)
		}
		if f.Status != "D" {
			aft[f.Path] = after(f)
		}
		pp := p.by[f.Path]
		if pp == nil {
			pp = &pathPlan{path: f.Path}
			p.by[f.Path] = pp
		}
		switch {
		case f.Heavy:
			pp.notRestorable = heavyWhy
		case f.Dir && f.Files > 0:
			pp.notRestorable = f.Why
		}
	}
	for _, path := range paths {
		pp := p.by[path]
		if pp.latest == 0 {
			pp.to = bef[path] // the first call's before: absent where it made it
		}
		pp.now, pp.latest = aft[path], c.n
	}
}

// lastChangeOf is the last finished call that changed the file at path (a
// host path), and the file's path in its tree, passing over the undos and
// the calls they took back.
func lastChangeOf(path, within string, byN map[int64]*callState, order []int64) (int64, string, error) {
	tree, why := TreeOfFile(path, within)
	if tree == "" {
		return 0, "", errors.New(why)
	}
	rel, ok := inTree(tree, path)
	if !ok {
		return 0, "", fmt.Errorf("%s is not in a tree history keeps", path)
	}
	// As a text editor's undo, a step further back each time: the undos,
	// and the calls they took back, are passed over.
	undone := map[int64]bool{}
	for _, n := range slices.Backward(order) {
		c := byN[n]
		if c.tree != tree || !c.ended {
			continue
		}
		for _, m := range c.undid {
			undone[m] = true
		}
		if len(c.undid) > 0 || undone[n] {
			continue
		}
		for _, f := range c.files() {
			if f.Path == rel && f.SaidBy == 0 {
				return n, rel, nil
			}
		}
	}
	return 0, "", fmt.Errorf("no call in this state directory's history changed %s", path)
}

// todo is one path an undo changes: what it holds now, read, and the
// change that takes it back.
type todo struct {
	pp     *pathPlan
	cur    replace.Seen
	change replace.Change
	action string
}

// classify looks at each path as it is now and sorts it: not restorable,
// as it was already, a conflict (unless force), or a change to make, with
// the content it gets back from the store.
func (p *undoPlan) classify(look *looker, h *history, a UndoArgs, res *UndoResult) []todo {
	nows := make([]replace.Seen, len(p.paths))
	pack.SideBySide(len(p.paths), func() func(int) {
		return func(i int) { nows[i] = look.at(p.paths[i].path) }
	})
	contents := h.contentsOf(p.paths)
	p.statsOfUnhashed(h)
	var out []todo
	for i, pp := range p.paths {
		cur := nows[i]
		us := UndoStep{Path: pp.path, Action: action(kindOf(cur.Mode), pp.to.kind), Dir: isDirStep(kindOf(cur.Mode), pp.to.kind)}
		to := pp.to
		switch {
		case pp.notRestorable != "":
			us.Why, us.Dir = pp.notRestorable, true
			res.NotKept = append(res.NotKept, us)
			continue
		case (to.kind == regular || to.kind == symlink) && !to.kept:
			us.Why = to.why
			if us.Why == "" {
				us.Why = "its content before is not kept"
			}
			res.NotKept = append(res.NotKept, us)
			continue
		case holds(cur, to):
			continue // already as it was
		case !a.Force:
			if why := p.changedSince(pp, cur); why != "" {
				us.Why = why
				res.Conflicts = append(res.Conflicts, us)
				continue
			}
		}
		ch := replace.Change{Path: pp.path, Target: pp.path}
		switch kindOf(cur.Mode) {
		case absent:
			ch.Expect = replace.Expect{Absent: true}
		case directory:
			ch.Expect = replace.Expect{Dir: true}
		default:
			ch.Expect = replace.Expect{SHA256: cur.SHA256}
		}
		switch to.kind {
		case absent:
			if kindOf(cur.Mode) == directory {
				ch = replace.Change{Path: pp.path, Target: pp.path, RemoveDir: true}
			}
		case directory:
			ch.Dir = true
			if to.mode != 0 {
				ch.Like.Mode = replace.ModeOf(to.mode &^ index.TypeMask)
			}
		default:
			content, ok := contents[to.sum]
			if !ok {
				us.Why = "its kept content does not read back (the store is corrupt)"
				res.NotKept = append(res.NotKept, us)
				continue
			}
			ch.Content = content
			if ch.Content == nil {
				ch.Content = []byte{}
			}
			ch.Link = to.kind == symlink
			if to.mode != 0 {
				ch.Like.Mode = replace.ModeOf(to.mode &^ index.TypeMask)
			}
		}
		out = append(out, todo{pp: pp, cur: cur, change: ch, action: us.Action})
		res.Restored = append(res.Restored, us)
	}
	return out
}

// isDirStep says a step is a directory's: one made or kept, or one that
// goes.
func isDirStep(cur, to kind) bool { return to == directory || to == absent && cur == directory }

// action names what an undo does to a path: "restore", "remove",
// "recreate".
func action(cur, to kind) string {
	switch {
	case to == absent:
		return "remove"
	case cur == absent:
		return "recreate"
	}
	return "restore"
}

// holds says whether what is there (cur) is the state st: its kind, its
// content, and its permissions where they are known.
func holds(cur replace.Seen, st pathState) bool {
	k := kindOf(cur.Mode)
	switch {
	case k != st.kind:
		return false
	case k == regular || k == symlink:
		if cur.SHA256 != st.sum {
			return false
		}
	}
	return st.mode == 0 || k == symlink || cur.Mode&0o7777 == st.mode&0o7777
}

// changedSince says how a path changed since the latest call left it, or
// "" where it holds what that call left.
func (p *undoPlan) changedSince(pp *pathPlan, cur replace.Seen) string {
	now := pp.now
	k := kindOf(cur.Mode)
	switch {
	case now.kind == regular && k == regular && now.sum == "" && p.outside[pp.path] <= pp.latest &&
		pp.stat != nil && index.SameStat(pp.stat, &index.Entry{Mode: cur.Mode, Size: cur.Size, Mtime: cur.Mtime, Ctime: cur.Ctime, Ino: cur.Ino, Dev: cur.Dev}):
		// Too large to hash: as a scan, the stat the index has stands,
		// where no change outside calls was said since.
		return ""
	case (now.kind == regular || now.kind == symlink) && k != absent && now.sum == "":
		return "what the call left is not known (too large to hash), so a change since cannot be told"
	case k == now.kind && (k == absent || k == directory || cur.SHA256 == now.sum):
		return ""
	}
	why := "changed since"
	if k != now.kind {
		why = fmt.Sprintf("changed since (a %s where the call left %s)", k, article(now.kind))
	}
	if n := p.later[pp.path]; n > 0 && !p.to {
		return why + fmt.Sprintf(" (call %d)", n)
	}
	return why + ", outside calls"
}

// statsOfUnhashed looks up the tree's index entries of the files the
// latest call left and no scan could hash.
func (p *undoPlan) statsOfUnhashed(h *history) {
	var rels []string
	for _, pp := range p.paths {
		if pp.now.kind == regular && pp.now.sum == "" {
			rels = append(rels, pp.path)
		}
	}
	if len(rels) == 0 {
		return
	}
	found, _, ok := index.Lookup(h.indexPath(p.tree), rels)
	if !ok {
		return
	}
	for _, pp := range p.paths {
		if e, ok := found[pp.path]; ok {
			pp.stat = &e
		}
	}
}

// article is a kind with its article: "a file", "nothing".
func article(k kind) string {
	switch k {
	case absent:
		return "nothing"
	case directory:
		return "a directory"
	}
	return "a " + k.String()
}

// contentsOf is the contents the paths get back, by their sha256 in hex,
// read back and checked (store.getAll); one that does not read back is
// not there.
func (h *history) contentsOf(paths []*pathPlan) map[string][]byte {
	var want [][32]byte
	var hexes []string
	seen := map[string]bool{}
	for _, pp := range paths {
		to := pp.to
		if to.kind != regular && to.kind != symlink || !to.kept || seen[to.sum] {
			continue
		}
		if sum, ok := pack.ParseSum(to.sum); ok {
			seen[to.sum] = true
			want, hexes = append(want, sum), append(hexes, to.sum)
		}
	}
	out := map[string][]byte{}
	if h.store == nil {
		return out
	}
	got, errs := h.store.GetAll(want)
	for i, b := range got {
		if errs[i] == nil {
			out[hexes[i]] = b
		}
	}
	return out
}
