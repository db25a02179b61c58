package replace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"toolkit/internal/root"
	"toolkit/internal/tempfile"
)

// TestHookRename, when set by a test, runs before each file CommitAll puts
// in place, with the path it goes to (the kill tests kill there).
var TestHookRename func(path string)

// maxStaging is how many files CommitAll stages at once.
const maxStaging = 16

// syncOnce is how many files CommitAll stages before it syncs their file
// system once (syncfs), not each file: a file's fsync costs a journal
// commit (0.2 ms each on ext4 here, 1,000 files 221 ms against one syncfs
// of them 56 ms).
const syncOnce = 8

// Change is what CommitAll does to one path: put a new content in its
// place (a file, or with Link a symbolic link), or remove it; make a
// directory there, or set the mode of the one there (Dir); or remove the
// directory there once all else is done, if it is empty then (RemoveDir:
// undo's, for the directories a call made). What a change replaces or
// removes may be a symbolic link, taken away, never followed, when Expect
// names it (its sha256 is its target's); where Expect says a directory is
// there, that directory goes (it must be empty by then) before the content
// takes its place.
type Change struct {
	Path      string // as the caller named it, for messages
	Target    string // the path inside the root, with no link in it
	Content   []byte // nil: remove the file (unless Dir)
	Link      bool   // Content is a symbolic link's target, put in as a link (undo's)
	Dir       bool   // a directory goes here, with Like.Mode (0: the default, or the one it has)
	Like      Like
	Expect    Expect
	RemoveDir bool // remove the directory Target if it is empty, after the rest
}

// The kinds of what a commit does, in the order it does them: what is in
// the way goes first (files and links, then directories, the deepest
// first), then directories are made (the shallowest first), then contents
// put in place, then directories given their modes; directories a call made
// go last, once the commit is done, if they are empty.
type opKind int

const (
	opRemove  opKind = iota // a file or link goes, kept under a name of its own until done
	opRmdir                 // an empty directory goes: something else takes its place
	opMkdir                 // a directory is made
	opPut                   // a content takes the path: a file or a link
	opChmod                 // a directory gets its mode
	opDropDir               // once done, a directory goes if it is empty
)

// op is one thing a commit does to one path.
type op struct {
	kind   opKind
	c      int // the change it is for
	target string
	expect Expect
	mode   fs.FileMode // opMkdir, opChmod: the directory's; opRmdir: the one it had
	staged *Staged     // opPut: staged before the journal, or when its turn comes (its directory made by the commit)
	temp   string      // opPut staged late: the name its content takes before its rename
	// backupAt is where an opRemove keeps the old content until done: its
	// directory, or the one above the topmost of its directories the
	// commit removes.
	backupAt string
	step     JournalStep
}

// commit is one CommitAll.
type commit struct {
	r       *root.Root
	changes []Change
	ops     []*op
	dirs    map[string]*os.File // each directory the commit works in, opened once
	touched map[string]bool     // the directories whose entries changed: synced once done
}

// CommitAll changes many paths, all of them or none: it stages every new
// content it can beside its file, journals the plan (Journal: should
// toolkit be killed in the middle, the next call's Recover puts every path
// back), then does each thing in turn, putting back those done already if
// one fails, and syncs the directories once at the end. Every directory
// is reached with no link on the way (root.OpenDirect), and a directory
// missing on the way to a new content is made inside the journal.
func CommitAll(r *root.Root, changes []Change) error {
	c := &commit{r: r, changes: changes, dirs: map[string]*os.File{}, touched: map[string]bool{}}
	defer c.closeDirs()
	if err := c.plan(); err != nil {
		return err
	}
	if err := c.stage(); err != nil {
		c.abort()
		return err
	}
	steps := make([]JournalStep, len(c.ops))
	for i, o := range c.ops {
		steps[i] = o.step
	}
	journal, err := BeginJournal(steps)
	if err != nil {
		c.abort()
		return fmt.Errorf("cannot keep the journal: %s", Reason(err))
	}
	defer journal.Close()
	var reverts []func() error
	var undos []*Undo
	revert := func() {
		for _, f := range slices.Backward(reverts) {
			_ = f()
		}
		c.abort()
	}
	for _, o := range c.ops {
		if o.kind == opDropDir {
			continue
		}
		undo, back, err := c.do(o)
		if err != nil {
			revert()
			ch := c.changes[o.c]
			if changed, ok := errors.AsType[*Changed](err); ok {
				return fmt.Errorf("%s: %s", ch.Path, changed)
			}
			return errors.New(CannotWrite(ch.Path, err))
		}
		if undo != nil {
			undos = append(undos, undo)
			back = undo.Revert
		}
		if back != nil {
			reverts = append(reverts, back)
		}
	}
	if err := journal.MarkDone(); err != nil {
		revert()
		return fmt.Errorf("cannot keep the journal: %s", Reason(err))
	}
	// Done, whatever comes: should toolkit be killed now, Recover lets the
	// old contents go and removes the directories that are left.
	for _, u := range undos {
		u.forget()
	}
	for _, o := range c.ops {
		if o.kind == opDropDir {
			if d, err := c.dir(filepath.Dir(o.target)); err == nil && unix.Unlinkat(int(d.Fd()), filepath.Base(o.target), unix.AT_REMOVEDIR) == nil {
				c.touched[filepath.Dir(o.target)] = true // only an empty one went
			}
		}
	}
	var first error
	for _, at := range slices.Sorted(maps.Keys(c.touched)) {
		if d, err := c.dir(at); err == nil {
			if err := d.Sync(); err != nil && first == nil {
				first = &Unsynced{Err: err}
			}
		}
	}
	for _, u := range undos {
		u.close()
	}
	return first
}

// plan turns the changes into ops, in the order they are done, each with
// its journal step.
func (c *commit) plan() error {
	made := map[string]bool{}
	add := func(o *op) { c.ops = append(c.ops, o) }
	for i, ch := range c.changes {
		switch {
		case ch.RemoveDir:
			add(&op{kind: opDropDir, c: i, target: ch.Target})
		case ch.Dir:
			mode := ch.Like.Mode
			now, err := c.lstat(ch.Target)
			switch {
			case err == nil && now.IsDir():
				if mode != 0 && mode != now.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) {
					add(&op{kind: opChmod, c: i, target: ch.Target, mode: mode})
				}
				continue
			case err == nil:
				if ch.Expect.Absent {
					return fmt.Errorf("%s: %s", ch.Path, &Changed{What: "something is there now"})
				}
				add(&op{kind: opRemove, c: i, target: ch.Target, expect: ch.Expect})
			case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, root.ErrNotDirect):
				return errors.New(CannotWrite(ch.Path, err))
			}
			add(&op{kind: opMkdir, c: i, target: ch.Target})
			made[ch.Target] = true
			if mode != 0 {
				add(&op{kind: opChmod, c: i, target: ch.Target, mode: mode})
			}
		case ch.Content != nil:
			expect := ch.Expect
			if expect.Dir {
				add(&op{kind: opRmdir, c: i, target: ch.Target, expect: expect})
				expect = Expect{Absent: true}
			}
			add(&op{kind: opPut, c: i, target: ch.Target, expect: expect})
		default:
			add(&op{kind: opRemove, c: i, target: ch.Target, expect: ch.Expect})
		}
	}
	// The directories missing on the way to what is made are made too.
	for _, o := range slices.Clone(c.ops) {
		if o.kind != opPut && o.kind != opMkdir {
			continue
		}
		for d := filepath.Dir(o.target); d != "." && d != "/" && !made[d]; d = filepath.Dir(d) {
			_, err := c.dir(d)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return errors.New(CannotWrite(c.changes[o.c].Path, err))
			}
			made[d] = true
			add(&op{kind: opMkdir, c: o.c, target: d})
		}
	}
	depth := func(p string) int { return strings.Count(filepath.Clean(p), "/") }
	slices.SortStableFunc(c.ops, func(a, b *op) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		switch a.kind {
		case opRmdir, opDropDir:
			return depth(b.target) - depth(a.target) // the deepest first
		case opMkdir:
			return depth(a.target) - depth(b.target) // the shallowest first
		}
		return 0
	})
	return nil
}

// lstat is what target is now, looked at in its directory: ErrNotDirect
// where a link or a file is on the way.
func (c *commit) lstat(target string) (os.FileInfo, error) {
	d, err := c.dir(filepath.Dir(target))
	if err != nil {
		return nil, err
	}
	return lstatAt(d, filepath.Base(target))
}

// dir is the directory at, opened once with no link on the way.
func (c *commit) dir(at string) (*os.File, error) {
	if d := c.dirs[at]; d != nil {
		return d, nil
	}
	d, err := c.r.OpenDirect(at)
	if err != nil {
		return nil, err
	}
	c.dirs[at] = d
	return d, nil
}

// stage stages, side by side, the contents whose directory is there (each
// staging ends in an fsync, and the file system takes the syncs of many
// together as quickly as one), and names the rest's temporary files; then
// makes each op's journal step.
func (c *commit) stage() error {
	made, gone := map[string]bool{}, map[string]bool{}
	for _, o := range c.ops {
		switch o.kind {
		case opMkdir:
			made[o.target] = true
		case opRmdir:
			gone[o.target] = true
		}
	}
	puts := 0
	for _, o := range c.ops {
		if o.kind == opPut && !made[filepath.Dir(o.target)] {
			puts++
		}
	}
	batch := puts >= syncOnce
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxStaging)
	errs := make([]error, len(c.ops))
	for i, o := range c.ops {
		if o.kind != opPut {
			continue
		}
		ch := c.changes[o.c]
		at := filepath.Dir(o.target)
		if made[at] {
			if o.expect.SHA256 != "" || o.expect.Dir {
				return fmt.Errorf("%s: %s", ch.Path, &Changed{What: "it is not there"})
			}
			o.expect = Expect{Absent: true} // in a directory the commit makes
			o.temp = tempfile.Name("."+filepath.Base(o.target)+".toolkit-", ".tmp")
			continue
		}
		d, err := c.dir(at)
		if err != nil {
			return errors.New(CannotWrite(ch.Path, err))
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			o.staged, errs[i] = c.stageOne(o, d, !batch)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return errors.New(CannotWrite(c.changes[c.ops[i].c].Path, err))
		}
	}
	if batch {
		if err := c.syncStaged(); err != nil {
			return fmt.Errorf("cannot sync the new contents: %s", Reason(err))
		}
	}
	for _, o := range c.ops {
		ch := c.changes[o.c]
		var err error
		switch o.kind {
		case opPut:
			if o.staged != nil {
				o.step, err = o.staged.Plan(c.r, o.expect, ch.Content)
			} else {
				o.step, err = stepFor(c.r, o.target)
				o.step.Temp, o.step.NewSHA256 = o.temp, SHA256(ch.Content)
			}
		case opRemove:
			o.backupAt = filepath.Dir(o.target)
			for d := o.backupAt; d != "." && d != "/"; d = filepath.Dir(d) {
				if gone[d] {
					o.backupAt = filepath.Dir(d)
				}
			}
			o.step, err = PlanRemove(c.r, o.target)
			if err == nil && o.backupAt != filepath.Dir(o.target) {
				var b JournalStep
				b, err = stepFor(c.r, filepath.Join(o.backupAt, "x"))
				o.step.BackupDir = b.Dir
			}
		case opRmdir:
			var fi os.FileInfo
			if fi, err = c.lstat(o.target); err == nil {
				o.mode = fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
				o.step, err = stepFor(c.r, o.target)
				o.step.RmDir, o.step.Mode = true, uint32(unixMode(o.mode))
			}
		case opMkdir:
			o.step, err = stepFor(c.r, o.target)
			o.step.MakeDir = true
		case opChmod:
			o.step, err = stepFor(c.r, o.target)
			o.step.SetMode = true
			if fi, lerr := c.lstat(o.target); lerr == nil {
				o.step.Mode = uint32(unixMode(fi.Mode()))
			}
		case opDropDir:
			o.step, err = stepFor(c.r, o.target)
			o.step.RemoveDir = true
		}
		if err != nil {
			return errors.New(CannotWrite(ch.Path, err))
		}
	}
	return nil
}

// stageOne stages an op's content in its directory d.
func (c *commit) stageOne(o *op, d *os.File, sync bool) (*Staged, error) {
	ch := c.changes[o.c]
	var what over
	if o.expect.SHA256 != "" {
		what |= overLink
	}
	if ch.Expect.Dir {
		what |= overDir
	}
	if ch.Link {
		s, err := stageLink(c.r, o.target, string(ch.Content), what, d)
		if err == nil && o.temp != "" {
			s.name = o.temp
		}
		return s, err
	}
	return stageNamed(c.r, o.target, ch.Like, what, d, o.temp, sync, func(w io.Writer) error {
		_, err := w.Write(ch.Content)
		return err
	})
}

// syncStaged syncs the file systems the staged contents are on, each
// once, as their fsyncs would: before the journal names them, so that a
// crash after a rename never leaves a file without its content.
func (c *commit) syncStaged() error {
	synced := map[uint64]bool{}
	for _, o := range c.ops {
		if o.staged == nil || o.staged.f == nil {
			continue
		}
		var st unix.Stat_t
		fd := int(o.staged.f.Fd())
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if synced[st.Dev] {
			continue
		}
		if err := unix.Syncfs(fd); err != nil {
			return err
		}
		synced[st.Dev] = true
	}
	return nil
}

// do does one op, once the journal names it: what puts it back should a
// later one fail (an Undo, or a function).
func (c *commit) do(o *op) (*Undo, func() error, error) {
	at, base := filepath.Dir(o.target), filepath.Base(o.target)
	d, err := c.dir(at)
	if err != nil {
		return nil, nil, err
	}
	dfd := int(d.Fd())
	c.touched[at] = true
	switch o.kind {
	case opRemove:
		if TestHookRename != nil {
			TestHookRename(o.target)
		}
		if o.backupAt == at {
			u, err := removeUndo(c.r, d, o.target, o.expect, o.step.Backup, nil, nil)
			return u, nil, err
		}
		// Its directory goes too: the old content waits above it.
		bd, err := c.dir(o.backupAt)
		if err != nil {
			return nil, nil, err
		}
		c.touched[o.backupAt] = true
		u, err := removeUndo(c.r, d, o.target, o.expect, o.step.Backup, bd, func() (*os.File, error) { return c.r.OpenDirect(at) })
		return u, nil, err
	case opRmdir:
		if fi, err := lstatAt(d, base); err != nil || !fi.IsDir() {
			return nil, nil, &Changed{What: "it is no longer a directory"}
		}
		if err := unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR); err != nil {
			return nil, nil, &fs.PathError{Op: "remove", Path: o.target, Err: err}
		}
		return nil, func() error { return remake(d, base, o.mode) }, nil
	case opMkdir:
		if err := unix.Mkdirat(dfd, base, 0o755); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				return nil, nil, &Changed{What: "something is there now"}
			}
			return nil, nil, &fs.PathError{Op: "mkdir", Path: o.target, Err: err}
		}
		c.touched[o.target] = true
		return nil, func() error { return unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR) }, nil
	case opChmod:
		fi, err := lstatAt(d, base)
		if err != nil || !fi.IsDir() {
			return nil, nil, &Changed{What: "it is no longer a directory"}
		}
		was := fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		if err := chmodDir(d, base, o.mode); err != nil {
			return nil, nil, err
		}
		return nil, func() error { return chmodDir(d, base, was) }, nil
	}
	// opPut.
	if o.staged == nil {
		// In a directory the commit made: staged now, under the name the
		// journal gave it (an unnamed file is linked in under its own).
		if o.staged, err = c.stageOne(o, d, true); err != nil {
			return nil, nil, err
		}
	}
	s := o.staged
	if s.linkDest != "" {
		if err := s.PlaceLink(); err != nil {
			return nil, nil, err
		}
	}
	if TestHookRename != nil {
		TestHookRename(o.target)
	}
	u, err := s.CommitUndo(o.expect)
	o.staged = nil
	return u, nil, err
}

// remake makes again a directory a commit removed, with its mode.
func remake(d *os.File, base string, mode fs.FileMode) error {
	if err := unix.Mkdirat(int(d.Fd()), base, 0o700); err != nil {
		return err
	}
	return chmodDir(d, base, mode)
}

// abort drops what is staged and not in place.
func (c *commit) abort() {
	for _, o := range c.ops {
		if o.staged != nil {
			o.staged.Abort()
			o.staged = nil
		}
	}
}

func (c *commit) closeDirs() {
	for _, d := range c.dirs {
		d.Close()
	}
}

// unixMode is a mode's st_mode bits: permissions, setuid, setgid, sticky.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= unix.S_ISVTX
	}
	return u
}
